#include "pkg/kube/eviction_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pkg/base/utf8.h"
#include "test/unit/kube/fakes.h"

namespace kdesched::kube::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class EvictionApiTest : public ::testing::Test {
 protected:
  void make(double qps, int burst) {
    ClientConfig cfg;
    cfg.server = "https://api:6443";
    cfg.bearerToken = "tok";
    cfg.qps = qps;
    cfg.burst = burst;
    cfg.requestTimeout = {};  // its timer would sleep on the fake clock, whose sleeps return at once
    auto t = std::make_unique<FakeTransport>();
    transport_ = t.get();
    client_ = std::make_unique<Client>(std::move(cfg), std::move(t), clock_);
    api_ = std::make_unique<KubeEvictionApi>(*client_, clock_);
  }
  static evictor::PodEvent event(std::string note = "pod eviction from n1 node by kdesched (p/X): rule") {
    return {"shop",        "payment-1",    "uid-1", "Normal", "RemovePodsViolatingInterPodAntiAffinity",
            "Descheduled", std::move(note)};
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  FakeTransport* transport_ = nullptr;
  std::unique_ptr<Client> client_;
  std::unique_ptr<KubeEvictionApi> api_;
};

// Upstream records through events.k8s.io/v1 (its RBAC grants nothing else): same group, same
// reporting controller, action and the regarding pod.
TEST_F(EvictionApiTest, EventsAreEventsK8sIoV1AsUpstreamRecordsThem) {
  make(-1, 0);
  transport_->onSend(Scripted::json("{}", 201));
  api_->recordEvent(event());
  auto sent = transport_->sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].method, "POST");
  EXPECT_EQ(sent[0].target, "/apis/events.k8s.io/v1/namespaces/shop/events");
  auto ev = nlohmann::json::parse(sent[0].body);
  EXPECT_EQ(ev["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(ev["kind"], "Event");
  EXPECT_EQ(ev["metadata"]["namespace"], "shop");
  EXPECT_EQ(ev["reportingController"], "sigs.k8s.io.descheduler");
  EXPECT_EQ(ev["reportingInstance"], "kdesched");
  EXPECT_EQ(ev["action"], "Descheduled");
  EXPECT_EQ(ev["type"], "Normal");
  EXPECT_EQ(ev["reason"], "RemovePodsViolatingInterPodAntiAffinity");
  EXPECT_EQ(ev["note"], "pod eviction from n1 node by kdesched (p/X): rule");
  EXPECT_EQ(
      ev["regarding"],
      (nlohmann::json{
          {"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "payment-1"}, {"namespace", "shop"}, {"uid", "uid-1"}}));
  EXPECT_EQ(ev["eventTime"], "2026-01-01T00:00:00.000000Z");  // MicroTime, required by the group
  // client-go's name: "<regarding name>.<hex unix nanoseconds>".
  EXPECT_EQ(ev["metadata"]["name"], "payment-1.18867251edfa0000");
  // No core/v1-only fields: the group's validation refuses deprecated ones on create.
  EXPECT_FALSE(ev.contains("involvedObject"));
  EXPECT_FALSE(ev.contains("message"));
  EXPECT_FALSE(ev.contains("count"));
}

// How long the eviction was out, by the injected clock: the sink logs it with a failure.
TEST_F(EvictionApiTest, AnEvictionReportsHowLongItWasOut) {
  make(-1, 0);
  Scripted slow = Scripted::json(R"({"kind":"Status","code":504,"reason":"Timeout"})", 504);
  slow.whileSent = [this] { clock_->advance(std::chrono::milliseconds(12500)); };
  transport_->onSend(slow);
  evictor::ApiAnswer a = api_->evict({"shop", "payment-1", "uid-1", std::nullopt, "why"});
  EXPECT_EQ(a.status, 504);
  EXPECT_DOUBLE_EQ(a.seconds, 12.5);
  transport_->onSend(Scripted::json("{}", 201));
  EXPECT_DOUBLE_EQ(api_->evict({"shop", "payment-1", "uid-1", std::nullopt, "why"}).seconds, 0);
}

TEST_F(EvictionApiTest, EventNamesStayUniqueWithinOneClockTick) {
  make(-1, 0);
  for (int i = 0; i < 3; ++i) transport_->onSend(Scripted::json("{}", 201));
  for (int i = 0; i < 3; ++i) api_->recordEvent(event());
  std::set<std::string> names;
  for (const auto& s : transport_->sent()) names.insert(nlohmann::json::parse(s.body)["metadata"]["name"]);
  EXPECT_EQ(names.size(), 3u);
}

// The server refuses a note over 1024 bytes, and the Event would be lost: cut it, whole characters only.
TEST_F(EvictionApiTest, LongNotesAreCutToTheLimitOnACharacterBoundary) {
  const std::string longNote = std::string(1022, 'a') + "\xC3\xA9\xC3\xA9";  // é straddles byte 1024
  EXPECT_EQ(eventNote(longNote), std::string(1022, 'a') + "\xC3\xA9");
  EXPECT_EQ(eventNote(std::string(1023, 'a') + "\xC3\xA9"), std::string(1023, 'a'));
  EXPECT_EQ(eventNote("short"), "short");
  make(-1, 0);
  transport_->onSend(Scripted::json("{}", 201));
  api_->recordEvent(event(std::string(5000, 'x')));
  auto note = nlohmann::json::parse(transport_->sent().at(0).body)["note"].get<std::string>();
  EXPECT_EQ(note.size(), kEventNoteLimit);
  EXPECT_TRUE(utf8::valid(note));
}

// Events have their own token bucket: recording them never makes an eviction wait.
TEST_F(EvictionApiTest, EventsDoNotSpendTheEvictionsBudget) {
  make(2, 1);
  for (int i = 0; i < 4; ++i) transport_->onSend(Scripted::json("{}", 201));
  api_->recordEvent(event());  // the events bucket's only token
  auto a = api_->evict({"shop", "payment-1", "uid-1", std::nullopt, "reason"});
  EXPECT_EQ(a.status, 201);
  EXPECT_THAT(clock_->sleeps(), IsEmpty());  // the client's bucket still had its token
  api_->recordEvent(event());                // the events bucket is empty now: it waits 1/qps
  EXPECT_THAT(clock_->sleeps(), ElementsAre(std::chrono::milliseconds(500)));
}

}  // namespace
}  // namespace kdesched::kube::testing

namespace kdesched::kube::testing {
namespace {

// After an eviction whose answer said nothing certain, the pod's GET says what happened.
class CheckPodTest : public EvictionApiTest {};

TEST_F(CheckPodTest, TheGetOfThePodJudgedAgainstItsUid) {
  using evictor::PodPresence;
  make(-1, 0);
  transport_->onSend(Scripted::json(R"({"kind":"Status","code":404,"reason":"NotFound"})", 404));
  transport_->onSend(Scripted::json(R"({"kind":"Pod","metadata":{"name":"payment-1","uid":"uid-1"}})"));
  transport_->onSend(Scripted::json(R"({"kind":"Pod","metadata":{"name":"payment-1","uid":"uid-2"}})"));
  transport_->onSend(Scripted::json(
      R"({"kind":"Pod","metadata":{"name":"payment-1","uid":"uid-1","deletionTimestamp":"2026-12-06T10:00:00Z"}})"));
  transport_->onSend(Scripted::failure("connection refused"));
  transport_->onSend(Scripted::json("not json"));
  std::vector<std::pair<PodPresence, std::string>> got;
  for (int i = 0; i < 6; ++i) {
    evictor::PodCheck c = api_->checkPod("shop", "payment-1", "uid-1");
    got.emplace_back(c.presence, c.detail);
  }
  EXPECT_EQ(got[0], std::make_pair(PodPresence::Gone, std::string("404: not found")));
  EXPECT_EQ(got[1].first, PodPresence::Present);
  EXPECT_EQ(got[2], std::make_pair(PodPresence::Gone, std::string("replaced by uid uid-2")));
  EXPECT_EQ(got[3], std::make_pair(PodPresence::Gone, std::string("deletionTimestamp 2026-12-06T10:00:00Z")));
  EXPECT_EQ(got[4].first, PodPresence::Unknown) << got[4].second;
  EXPECT_EQ(got[5].first, PodPresence::Unknown) << got[5].second;
  auto sent = transport_->sent();
  ASSERT_EQ(sent.size(), 6u);
  EXPECT_EQ(sent[0].method, "GET");
  EXPECT_EQ(sent[0].target, "/api/v1/namespaces/shop/pods/payment-1");
}

}  // namespace
}  // namespace kdesched::kube::testing
