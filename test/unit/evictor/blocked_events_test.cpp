#include "pkg/evictor/blocked_events.h"

#include <gtest/gtest.h>

#include "pkg/evictor/api_sink.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/fake_eviction_api.h"

namespace kdesched::testing {
namespace {

using framework::EvictResult;
using framework::Refusal;

evictor::Decision decision(const api::Pod& p) {
  return {&p, "node1", "RemovePodsViolatingInterPodAntiAffinity", "default", "pod shop/payment breaks order's term"};
}

EvictResult pdb() {
  return EvictResult::refused(Refusal::Pdb, "PodDisruptionBudget shop/payment",
                              "disruptionsAllowed 0 (minAvailable 1, currentHealthy 1, desiredHealthy 1)");
}

TEST(BlockedEvents, OneNormalEventSayingWhatWasWantedAndWhatStoppedIt) {
  FakeClock clock;
  evictor::BlockedEvents blocked({}, clock);
  auto pod = PodBuilder("payment", "shop").node("node1").build();
  evictor::PodEvent e;
  ASSERT_EQ(blocked.take(decision(*pod), pdb(), e), "posted");
  EXPECT_EQ(e.ns, "shop");
  EXPECT_EQ(e.podName, "payment");
  EXPECT_EQ(e.podUid, pod->uid.str());
  EXPECT_EQ(e.type, "Normal");
  EXPECT_EQ(e.reason, "DeschedulingBlocked");
  EXPECT_TRUE(e.background);
  EXPECT_EQ(e.note,
            "kdesched (default/RemovePodsViolatingInterPodAntiAffinity) would evict this pod from node1: pod "
            "shop/payment breaks order's term; blocked by PodDisruptionBudget shop/payment (pdb): "
            "disruptionsAllowed 0 (minAvailable 1, currentHealthy 1, desiredHealthy 1)");
}

TEST(BlockedEvents, OncePerPodAndRefusalWithinThePeriod) {
  FakeClock clock;
  evictor::BlockedEvents blocked({.enabled = true, .period = std::chrono::minutes(30), .perMinute = 0}, clock);
  auto pod = PodBuilder("payment", "shop").build();
  auto other = PodBuilder("payment-2", "shop").build();
  evictor::PodEvent e;
  EXPECT_EQ(blocked.take(decision(*pod), pdb(), e), "posted");
  EXPECT_EQ(blocked.take(decision(*pod), pdb(), e), "repeat");
  // Another refusal of the same pod, or another pod: an Event each.
  EXPECT_EQ(
      blocked.take(decision(*pod), EvictResult::refused(Refusal::AntiFlapping, "anti-flapping: cooldown", "x"), e),
      "posted");
  EXPECT_EQ(blocked.take(decision(*other), pdb(), e), "posted");
  clock.advance(std::chrono::minutes(29));
  EXPECT_EQ(blocked.take(decision(*pod), pdb(), e), "repeat");
  clock.advance(std::chrono::minutes(1));
  EXPECT_EQ(blocked.take(decision(*pod), pdb(), e), "posted") << "the period is over";
  EXPECT_EQ(blocked.take(decision(*pod), pdb(), e), "repeat") << "and starts again";
}

TEST(BlockedEvents, AtMostPerMinuteForAllPodsRefilledOverTime) {
  FakeClock clock;
  evictor::BlockedEvents blocked({.enabled = true, .period = std::chrono::hours(1), .perMinute = 3}, clock);
  std::vector<std::shared_ptr<const api::Pod>> pods;
  for (int i = 0; i < 8; ++i) pods.push_back(PodBuilder("p" + std::to_string(i), "shop").build());
  evictor::PodEvent e;
  int posted = 0;
  for (int i = 0; i < 5; ++i) posted += blocked.take(decision(*pods[i]), pdb(), e) == "posted";
  EXPECT_EQ(posted, 3) << "one minute's worth at once";
  EXPECT_EQ(blocked.take(decision(*pods[3]), pdb(), e), "budget");
  clock.advance(std::chrono::seconds(20));  // one token back
  EXPECT_EQ(blocked.take(decision(*pods[3]), pdb(), e), "posted") << "not remembered when over the budget";
  EXPECT_EQ(blocked.take(decision(*pods[4]), pdb(), e), "budget");
  clock.advance(std::chrono::minutes(10));  // refilled, but never beyond one minute's worth
  posted = 0;
  for (int i = 4; i < 8; ++i) posted += blocked.take(decision(*pods[i]), pdb(), e) == "posted";
  EXPECT_EQ(posted, 3);
}

TEST(BlockedEvents, OnlyRefusalsThatSaySomethingAboutThePodAndNoneWhenOff) {
  FakeClock clock;
  evictor::BlockedEvents blocked({}, clock);
  auto pod = PodBuilder("payment", "shop").build();
  evictor::PodEvent e;
  for (Refusal r : {Refusal::Shutdown, Refusal::StaleCache, Refusal::NotLeader, Refusal::ApiError})
    EXPECT_EQ(blocked.take(decision(*pod), EvictResult::refused(r, "x", "y"), e), "none") << framework::toString(r);
  for (Refusal r : {Refusal::Filter, Refusal::PreEvictionFilter, Refusal::TotalLimit, Refusal::NodeLimit,
                    Refusal::NamespaceLimit, Refusal::Pdb, Refusal::AntiFlapping})
    EXPECT_EQ(blocked.take(decision(*pod), EvictResult::refused(r, "x", "y"), e), "posted") << framework::toString(r);
  evictor::BlockedEvents off({.enabled = false}, clock);
  EXPECT_EQ(off.take(decision(*pod), pdb(), e), "off");
}

// The sink posts them: for the chain's refusals and for a PDB's 429 from the API server, not for
// other failed requests.
TEST(BlockedEvents, TheApiSinkPostsThemForRefusalsAndAPdbs429) {
  FakeClock clock;
  evictor::BlockedEvents blocked({}, clock);
  FakeEvictionApi api;
  evictor::ApiSink sink(
      api, {.gracePeriodSeconds = std::nullopt, .failureEvents = false, .clock = &clock, .blocked = &blocked});
  auto pod = PodBuilder("payment", "shop").node("node1").build();
  sink.refused({decision(*pod), pdb()});
  sink.refused({decision(*pod), pdb()});
  ASSERT_EQ(api.events.size(), 1u);
  EXPECT_EQ(api.events[0].reason, "DeschedulingBlocked");

  auto order = PodBuilder("order", "shop").node("node1").build();
  api.answer = {.status = 429,
                .reason = "TooManyRequests",
                .message = "Cannot evict pod as it would violate the pod's disruption budget.",
                .disruptionBudget = true};
  EXPECT_FALSE(sink.evict(decision(*order)).evicted);
  ASSERT_EQ(api.events.size(), 2u);
  EXPECT_EQ(api.events[1].podName, "order");
  EXPECT_NE(api.events[1].note.find("blocked by api: PodDisruptionBudget (pdb): Cannot evict pod"), std::string::npos)
      << api.events[1].note;

  auto gone = PodBuilder("gone", "shop").node("node1").build();
  api.answer = {.status = 404, .reason = "NotFound", .message = "not found"};
  EXPECT_FALSE(sink.evict(decision(*gone)).evicted);
  EXPECT_EQ(api.events.size(), 2u) << "a pod already gone gets no Event";
}

}  // namespace
}  // namespace kdesched::testing
