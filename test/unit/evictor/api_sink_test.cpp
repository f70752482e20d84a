#include "pkg/evictor/api_sink.h"

#include <gtest/gtest.h>

#include "pkg/base/log.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/fake_eviction_api.h"

namespace kdesched::testing {
namespace {

evictor::Decision decision(const api::Pod& p) {
  return {&p, "node2", "RemovePodsViolatingInterPodAntiAffinity", "default", "term broken"};
}

TEST(ApiSink, SuccessSendsUidPreconditionGraceAndAnEvent) {
  FakeEvictionApi api;
  evictor::ApiSink sink(api, {std::int64_t{30}, false});
  auto pod = PodBuilder("payment").node("node2").build();
  auto r = sink.evict(decision(*pod));
  EXPECT_TRUE(r.evicted);
  ASSERT_EQ(api.requests.size(), 1u);
  EXPECT_EQ(api.requests[0].uid, pod->uid);
  EXPECT_EQ(api.requests[0].gracePeriodSeconds, 30);
  EXPECT_EQ(api.requests[0].reasonAnnotation,
            "triggered by default/RemovePodsViolatingInterPodAntiAffinity: term broken");
  ASSERT_EQ(api.events.size(), 1u);
  EXPECT_EQ(api.events[0].type, "Normal");
  EXPECT_EQ(api.events[0].reason, "RemovePodsViolatingInterPodAntiAffinity");
  EXPECT_EQ(api.events[0].action, "Descheduled");
  EXPECT_NE(api.events[0].note.find("term broken"), std::string::npos);
}

TEST(ApiSink, TheEventAndTheLogLineSayWhereThePodIsExpectedToLand) {
  std::vector<std::string> lines;
  log::setWriter([&lines](std::string_view line) { lines.emplace_back(line); });
  FakeEvictionApi api;
  evictor::ApiSink sink(api, {std::nullopt, false});
  auto pod = PodBuilder("payment").node("node2").build();
  auto d = decision(*pod);
  d.landing.estimated = true;
  d.landing.fits = {"node3", "node1"};
  d.landing.fitCount = 2;
  EXPECT_TRUE(sink.evict(d).evicted);
  d.landing = {};
  d.landing.estimated = true;
  d.landing.unfit = {{"insufficient cpu", 2}};
  EXPECT_TRUE(sink.evict(d).evicted);
  log::setWriter(nullptr);
  ASSERT_EQ(api.events.size(), 2u);
  EXPECT_EQ(api.events[0].note,
            "pod eviction from node2 node by kdesched (default/RemovePodsViolatingInterPodAntiAffinity): term broken; "
            "expected on node3 (fits 2 nodes: node3, node1)");
  EXPECT_NE(api.events[1].note.find("term broken; fits no node, would stay Pending (2 insufficient cpu)"),
            std::string::npos)
      << api.events[1].note;
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("expected_node=node3 landing=\"expected on node3"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("expected_node=none landing=\"fits no node"), std::string::npos) << lines[1];
}

struct AnswerCase {
  std::string name;
  evictor::ApiAnswer answer;
  framework::Refusal want;
  framework::ApiFailure api;
  std::string byContains;
};

class ApiSinkAnswers : public ::testing::TestWithParam<AnswerCase> {};

TEST_P(ApiSinkAnswers, MapsToRefusals) {
  FakeEvictionApi api;
  api.answer = GetParam().answer;
  evictor::ApiSink sink(api, {std::nullopt, true});
  auto pod = PodBuilder("payment").node("node2").build();
  auto r = sink.evict(decision(*pod));
  EXPECT_FALSE(r.evicted);
  EXPECT_EQ(r.refusal, GetParam().want);
  EXPECT_EQ(r.api, GetParam().api) << framework::toString(r.api);
  EXPECT_NE(r.by.find(GetParam().byContains), std::string::npos) << r.by;
  ASSERT_EQ(api.requests.size(), 1u);  // no retry inside a cycle
  ASSERT_EQ(api.events.size(), 1u);    // evictionFailureEventNotification
  EXPECT_EQ(api.events[0].type, "Warning");
  EXPECT_EQ(api.events[0].reason, "EvictionFailed");
}

using framework::ApiFailure;
using framework::Refusal;

INSTANTIATE_TEST_SUITE_P(
    Table, ApiSinkAnswers,
    ::testing::Values(AnswerCase{"pdb",
                                 {.status = 429,
                                  .reason = "TooManyRequests",
                                  .message = "Cannot evict pod as it would violate the pod's disruption budget.",
                                  .disruptionBudget = true},
                                 Refusal::Pdb,
                                 ApiFailure::TooManyRequests,
                                 "PodDisruptionBudget"},
                      AnswerCase{"throttled",
                                 {.status = 429, .reason = "TooManyRequests", .message = "Too many requests"},
                                 Refusal::ApiError,
                                 ApiFailure::TooManyRequests,
                                 "throttled"},
                      AnswerCase{"gone",
                                 {.status = 404, .reason = "NotFound", .message = "pods \"payment\" not found"},
                                 Refusal::ApiError,
                                 ApiFailure::NotFound,
                                 "not found"},
                      AnswerCase{"replaced",
                                 {.status = 409, .reason = "Conflict", .message = "uid precondition"},
                                 Refusal::ApiError,
                                 ApiFailure::Conflict,
                                 "conflict"},
                      AnswerCase{"unauthorized",
                                 {.status = 401, .reason = "Unauthorized", .message = ""},
                                 Refusal::ApiError,
                                 ApiFailure::Unauthorized,
                                 "401"},
                      AnswerCase{"forbidden",
                                 {.status = 403, .reason = "Forbidden", .message = "cannot create pods/eviction"},
                                 Refusal::ApiError,
                                 ApiFailure::Forbidden,
                                 "403"},
                      AnswerCase{"invalid",
                                 {.status = 422, .reason = "Invalid", .message = "bad"},
                                 Refusal::ApiError,
                                 ApiFailure::Rejected,
                                 "422"},
                      AnswerCase{"server",
                                 {.status = 500, .reason = "InternalError", .message = "etcd"},
                                 Refusal::ApiError,
                                 ApiFailure::ServerError,
                                 "500"},
                      AnswerCase{"unreachable",
                                 {.status = 0, .reason = "", .message = "connection refused"},
                                 Refusal::ApiError,
                                 ApiFailure::Unreachable,
                                 "unreachable"},
                      AnswerCase{"cancelled",
                                 {.status = 0, .reason = "", .message = "cancelled", .cancelled = true},
                                 Refusal::ApiError,
                                 ApiFailure::Cancelled,
                                 "cancelled"}),
    [](const auto& info) { return info.param.name; });

// A failed eviction's line says how long ago it was sent: the answer to one sent just before the
// server paused comes after the pause, when its sender may no longer lead (the chaos checker
// judges the sender at the time it sent).
TEST(ApiSink, AFailedEvictionSaysHowLongItWasOut) {
  std::vector<std::string> lines;
  log::setWriter([&](std::string_view l) { lines.emplace_back(l); });
  FakeEvictionApi api;
  api.answer = {.status = 504, .reason = "Timeout", .message = "the server was paused", .seconds = 12.5};
  evictor::ApiSink sink(api, {std::nullopt, false});
  auto pod = PodBuilder("payment").node("node2").build();
  EXPECT_FALSE(sink.evict(decision(*pod)).evicted);
  log::setWriter(nullptr);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("eviction failed"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("seconds=12.5"), std::string::npos) << lines[0];
}

// A 504 comes from the API server's timeout filter while its handler may go on and evict (the soak
// saw one carried out 27 ms after the answer): the pod is looked up until it is gone, and only a
// pod still there after the last wait is an eviction that failed.
TEST(ApiSink, A504WhosePodIsGoneIsAnEviction) {
  std::vector<std::string> lines;
  log::setWriter([&](std::string_view l) { lines.emplace_back(l); });
  FakeEvictionApi api;
  FakeClock clock;
  api.answer = {.status = 504, .reason = "Timeout", .message = "the server was paused", .seconds = 12.5};
  using evictor::PodPresence;
  api.checks = {{PodPresence::Present, "the same uid, not being deleted"},
                {PodPresence::Gone, "deletionTimestamp 2026-12-06T10:00:00Z"}};
  evictor::ApiSink sink(api, {.gracePeriodSeconds = std::nullopt, .failureEvents = true, .clock = &clock});
  auto pod = PodBuilder("payment").node("node2").build();
  auto r = sink.evict(decision(*pod));
  log::setWriter(nullptr);
  EXPECT_TRUE(r.evicted) << r.detail;
  EXPECT_EQ(api.checked, 2);
  EXPECT_EQ(clock.sleeps(), (std::vector<Clock::Duration>{std::chrono::milliseconds(500), std::chrono::seconds(1)}));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("msg=\"Evicted pod\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("answer=504 confirmed=\"deletionTimestamp 2026-12-06T10:00:00Z\""), std::string::npos)
      << lines[0];
  ASSERT_EQ(api.events.size(), 1u);
  EXPECT_EQ(api.events[0].type, "Normal");
}

TEST(ApiSink, A5xxWhosePodStaysIsAFailureAfterTheLastLookUp) {
  FakeEvictionApi api;
  FakeClock clock;
  api.answer = {.status = 500, .reason = "InternalError", .message = "etcd"};
  evictor::ApiSink sink(api, {.gracePeriodSeconds = std::nullopt, .failureEvents = false, .clock = &clock});
  auto pod = PodBuilder("payment").node("node2").build();
  auto r = sink.evict(decision(*pod));
  EXPECT_FALSE(r.evicted);
  EXPECT_EQ(r.api, framework::ApiFailure::ServerError);
  EXPECT_NE(r.detail.find("not evicted: the same uid, not being deleted"), std::string::npos) << r.detail;
  EXPECT_EQ(api.checked, 3);
  EXPECT_EQ(clock.sleeps().size(), 3u);
}

// Nothing known (the look-ups fail too, the API server unreachable): counted as evicted, so its
// limit slot and PDB budget stay spent and no later plugin of the run picks the pod.
TEST(ApiSink, NoAnswerAndNoLookUpCountsAsEvicted) {
  std::vector<std::string> lines;
  log::setWriter([&](std::string_view l) { lines.emplace_back(l); });
  FakeEvictionApi api;
  api.answer = {.status = 0, .reason = "", .message = "timed out after 30s"};
  using evictor::PodPresence;
  api.checks = {{PodPresence::Unknown, "connection refused"},
                {PodPresence::Unknown, "connection refused"},
                {PodPresence::Unknown, "connection refused"}};
  evictor::ApiSink sink(api, {std::nullopt, false});
  auto pod = PodBuilder("payment").node("node2").build();
  EXPECT_TRUE(sink.evict(decision(*pod)).evicted);
  log::setWriter(nullptr);
  EXPECT_EQ(api.checked, 3);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("level=warn msg=\"eviction outcome unknown; counted as evicted\""), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("result=unknown"), std::string::npos) << lines[0];
}

// With requests in flight an eviction is sent a little after the gate admitted it: leadership is
// asked again right before the POST (Lease-based election has no fencing).
TEST(ApiSink, NothingIsSentOnceThisReplicaNoLongerLeads) {
  struct : evictor::Leadership {
    bool leader = false;
    bool isLeader() const override { return leader; }
  } leadership;
  FakeEvictionApi api;
  evictor::ApiSink sink(api, {.gracePeriodSeconds = std::nullopt, .failureEvents = true, .leader = &leadership});
  auto pod = PodBuilder("payment").node("node2").build();
  auto r = sink.evict(decision(*pod));
  EXPECT_FALSE(r.evicted);
  EXPECT_EQ(r.refusal, framework::Refusal::NotLeader);
  EXPECT_TRUE(api.requests.empty());
  EXPECT_TRUE(api.events.empty());
  leadership.leader = true;
  EXPECT_TRUE(sink.evict(decision(*pod)).evicted);
  EXPECT_EQ(api.requests.size(), 1u);
}

// A definite answer needs no look-up: a 429 (PDB or throttling), a 4xx, shutdown.
TEST(ApiSink, DefiniteAnswersAreNotLookedUp) {
  for (evictor::ApiAnswer a :
       {evictor::ApiAnswer{.status = 429, .reason = "TooManyRequests", .message = "budget", .disruptionBudget = true},
        evictor::ApiAnswer{.status = 404, .reason = "NotFound", .message = "gone"},
        evictor::ApiAnswer{.status = 0, .reason = "", .message = "cancelled", .cancelled = true}}) {
    FakeEvictionApi api;
    api.answer = a;
    evictor::ApiSink sink(api, {std::nullopt, false});
    auto pod = PodBuilder("payment").node("node2").build();
    EXPECT_FALSE(sink.evict(decision(*pod)).evicted) << a.status;
    EXPECT_EQ(api.checked, 0) << a.status;
  }
}

// A refusal that repeats the last one logged for its pod (same refusal, same refuser) is a debug
// line until the quiet window has passed; a different refusal, or another pod, is info at once.
TEST(ApiSink, ARepeatedRefusalIsLoggedAtInfoOncePerWindow) {
  std::vector<std::string> lines;
  log::setWriter([&](std::string_view l) { lines.emplace_back(l); });
  log::setLevel(log::Level::Info);
  FakeEvictionApi api;
  FakeClock clock;
  evictor::ApiSink sink(api, {.gracePeriodSeconds = std::nullopt,
                              .failureEvents = false,
                              .clock = &clock,
                              .repeatQuiet = std::chrono::seconds(600)});
  auto a = PodBuilder("a").node("node2").build();
  auto b = PodBuilder("b").node("node2").build();
  auto refuse = [&](const api::Pod& p, framework::Refusal r, const std::string& by) {
    sink.refused({decision(p), framework::EvictResult::refused(r, by, "detail")});
  };
  refuse(*a, framework::Refusal::AntiFlapping, "anti-flapping");
  clock.advanceSeconds(1);
  refuse(*a, framework::Refusal::AntiFlapping, "anti-flapping");    // a repeat: debug
  refuse(*b, framework::Refusal::AntiFlapping, "anti-flapping");    // another pod
  refuse(*a, framework::Refusal::Pdb, "PodDisruptionBudget ns/a");  // another refusal
  refuse(*a, framework::Refusal::Pdb, "PodDisruptionBudget ns/a");  // a repeat: debug
  clock.advanceSeconds(600);
  refuse(*a, framework::Refusal::Pdb, "PodDisruptionBudget ns/a");  // the window has passed
  log::setWriter(nullptr);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("pod=default/a"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("pod=default/b"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("refusal=pdb"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("refusal=pdb"), std::string::npos) << lines[3];
  for (const std::string& l : lines) EXPECT_NE(l.find("repeat=false"), std::string::npos) << l;
}

TEST(ApiSink, PodWithoutUidIsNotEvicted) {
  FakeEvictionApi api;
  evictor::ApiSink sink(api, {});
  auto pod = std::make_shared<api::Pod>(*PodBuilder("p").build());
  pod->uid.clear();
  auto r = sink.evict(decision(*pod));
  EXPECT_FALSE(r.evicted);
  EXPECT_EQ(r.api, framework::ApiFailure::None);  // no request made
  EXPECT_TRUE(api.requests.empty());
}

}  // namespace
}  // namespace kdesched::testing

namespace kdesched::testing {
namespace {

evictor::Decision moveOf(const api::Pod& p) {
  evictor::Decision d = decision(p);
  d.move = evictor::MovePlan{.ns = "default",
                             .deployment = "payment",
                             .uid = "dep-uid",
                             .resourceVersion = "42",
                             .generation = 3,
                             .rollout = "rollout restart of Deployment default/payment",
                             .deadlineSeconds = 600};
  return d;
}

// A move restarts the Deployment (kubectl's annotation, at the injected wall time, with the UID and
// resourceVersion as preconditions) and evicts nothing.
TEST(ApiSink, AMoveRestartsTheDeploymentInsteadOfEvicting) {
  FakeEvictionApi api;
  FakeClock clock;
  evictor::ApiSink sink(api, {.gracePeriodSeconds = std::nullopt, .failureEvents = false, .clock = &clock});
  auto pod = PodBuilder("payment").node("node2").build();
  EXPECT_TRUE(sink.evict(moveOf(*pod)).evicted);
  EXPECT_TRUE(api.requests.empty()) << "no Eviction for a move";
  ASSERT_EQ(api.restarts.size(), 1u);
  EXPECT_EQ(api.restarts[0].ns, "default");
  EXPECT_EQ(api.restarts[0].name, "payment");
  EXPECT_EQ(api.restarts[0].uid, "dep-uid");
  EXPECT_EQ(api.restarts[0].resourceVersion, "42");
  EXPECT_EQ(api.restarts[0].restartedAt, "2026-01-01T00:00:00Z");
}

TEST(ApiSink, AMoveWhoseDeploymentChangedIsRefusedNotRetriedAsAnEviction) {
  FakeEvictionApi api;
  api.restartAnswer = {.status = 409, .reason = "Conflict", .message = "the object has been modified"};
  evictor::ApiSink sink(api, {});
  auto pod = PodBuilder("payment").node("node2").build();
  framework::EvictResult r = sink.evict(moveOf(*pod));
  EXPECT_FALSE(r.evicted);
  EXPECT_EQ(r.refusal, framework::Refusal::ApiError);
  EXPECT_EQ(r.by, "api: Deployment default/payment");
  EXPECT_NE(r.detail.find("changed since it was read"), std::string::npos) << r.detail;
  EXPECT_TRUE(api.requests.empty());
}

}  // namespace
}  // namespace kdesched::testing
