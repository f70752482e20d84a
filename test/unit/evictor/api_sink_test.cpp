#include "pkg/evictor/api_sink.h"

#include <gtest/gtest.h>

#include "pkg/base/log.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::testing {
namespace {

struct FakeApi : evictor::EvictionApi {
  evictor::ApiAnswer answer{201, "", "", false};
  std::vector<evictor::EvictionRequest> requests;
  std::vector<evictor::PodEvent> events;
  evictor::ApiAnswer evict(const evictor::EvictionRequest& r) override {
    requests.push_back(r);
    return answer;
  }
  void recordEvent(const evictor::PodEvent& e) override { events.push_back(e); }
};

evictor::Decision decision(const api::Pod& p) {
  return {&p, "node2", "RemovePodsViolatingInterPodAntiAffinity", "default", "term broken"};
}

TEST(ApiSink, SuccessSendsUidPreconditionGraceAndAnEvent) {
  FakeApi api;
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
  FakeApi api;
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
  FakeApi api;
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
    ::testing::Values(
        AnswerCase{"pdb",
                   {429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.", true},
                   Refusal::Pdb,
                   ApiFailure::TooManyRequests,
                   "PodDisruptionBudget"},
        AnswerCase{"throttled",
                   {429, "TooManyRequests", "Too many requests", false},
                   Refusal::ApiError,
                   ApiFailure::TooManyRequests,
                   "throttled"},
        AnswerCase{"gone",
                   {404, "NotFound", "pods \"payment\" not found", false},
                   Refusal::ApiError,
                   ApiFailure::NotFound,
                   "not found"},
        AnswerCase{"replaced",
                   {409, "Conflict", "uid precondition", false},
                   Refusal::ApiError,
                   ApiFailure::Conflict,
                   "conflict"},
        AnswerCase{
            "unauthorized", {401, "Unauthorized", "", false}, Refusal::ApiError, ApiFailure::Unauthorized, "401"},
        AnswerCase{"forbidden",
                   {403, "Forbidden", "cannot create pods/eviction", false},
                   Refusal::ApiError,
                   ApiFailure::Forbidden,
                   "403"},
        AnswerCase{"invalid", {422, "Invalid", "bad", false}, Refusal::ApiError, ApiFailure::Rejected, "422"},
        AnswerCase{"server", {500, "InternalError", "etcd", false}, Refusal::ApiError, ApiFailure::ServerError, "500"},
        AnswerCase{"unreachable",
                   {0, "", "connection refused", false},
                   Refusal::ApiError,
                   ApiFailure::Unreachable,
                   "unreachable"},
        AnswerCase{
            "cancelled", {0, "", "cancelled", false, true}, Refusal::ApiError, ApiFailure::Cancelled, "cancelled"}),
    [](const auto& info) { return info.param.name; });

// A failed eviction's line says how long ago it was sent: the answer to one sent just before the
// server paused comes after the pause, when its sender may no longer lead (the chaos checker
// judges the sender at the time it sent).
TEST(ApiSink, AFailedEvictionSaysHowLongItWasOut) {
  std::vector<std::string> lines;
  log::setWriter([&](std::string_view l) { lines.emplace_back(l); });
  FakeApi api;
  api.answer = {504, "Timeout", "the server was paused", false, false, 12.5};
  evictor::ApiSink sink(api, {std::nullopt, false});
  auto pod = PodBuilder("payment").node("node2").build();
  EXPECT_FALSE(sink.evict(decision(*pod)).evicted);
  log::setWriter(nullptr);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("eviction failed"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("seconds=12.5"), std::string::npos) << lines[0];
}

// A refusal that repeats the last one logged for its pod (same refusal, same refuser) is a debug
// line until the quiet window has passed; a different refusal, or another pod, is info at once.
TEST(ApiSink, ARepeatedRefusalIsLoggedAtInfoOncePerWindow) {
  std::vector<std::string> lines;
  log::setWriter([&](std::string_view l) { lines.emplace_back(l); });
  log::setLevel(log::Level::Info);
  FakeApi api;
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
  FakeApi api;
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
