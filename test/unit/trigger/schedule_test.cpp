// TriggerSchedule on its own: store events, deferrals, deadlines and rescans at made-up times, and
// what nextWakeup() and take() say is due. No store, no thread, no clock: every call is given the
// time it happens at.
#include "pkg/trigger/schedule.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

using trigger::DeadlineEntry;
using trigger::Deferred;
using trigger::DueWork;
using trigger::TriggerSchedule;

// Times in whole milliseconds, so that a time plus a configured duration is exactly another.
Clock::TimePoint at(double s) { return Clock::TimePoint{} + std::chrono::milliseconds(std::llround(s * 1000)); }
double secs(Clock::TimePoint t) { return std::chrono::duration<double>(t - Clock::TimePoint{}).count(); }

policy::TriggerConfig config() {
  policy::TriggerConfig c;
  c.debounceSeconds = 1;
  c.quietSeconds = 0.2;
  c.cpuShare = 0.25;
  c.balanceDebounceSeconds = 30;
  c.deadlineHorizonSeconds = 600;
  c.maxDeadlines = 10;
  return c;
}

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;

cluster::StoreEvent added(PodPtr p) { return cluster::Change<api::Pod>{cluster::EventType::Added, nullptr, p}; }
cluster::StoreEvent modified(PodPtr before, PodPtr after) {
  return cluster::Change<api::Pod>{cluster::EventType::Modified, before, after};
}
cluster::StoreEvent deleted(PodPtr p) { return cluster::Change<api::Pod>{cluster::EventType::Deleted, p, nullptr}; }
cluster::StoreEvent nodeModified(NodePtr before, NodePtr after) {
  return cluster::Change<api::Node>{cluster::EventType::Modified, before, after};
}

// A pod no rule can select: no anti-affinity of its own, and none in the cache names app=web.
PodPtr web(const std::string& name) { return PodBuilder(name).app("web").node("node1").build(); }
// A pod that refuses app=order next to it, and one it refuses.
PodPtr payment() { return PodBuilder("payment").app("payment").node("node2").antiAffinity("app", "order").build(); }
PodPtr order(const std::string& name) { return PodBuilder(name).app("order").node("node2").build(); }

// A candidate deferred to `due` (its batch's first event at 0).
Deferred deferredTo(std::string_view pod, double due) {
  return Deferred{.pod = podName(pod), .plugins = {}, .due = at(due), .firstEvent = at(0)};
}

// When the schedule next has something due, in seconds; none when nothing is pending.
std::optional<double> wake(const TriggerSchedule& s) {
  const auto w = s.nextWakeup();
  return w ? std::optional<double>(secs(*w)) : std::nullopt;
}

TEST(TriggerSchedule, NothingPendingIsNothingDue) {
  TriggerSchedule s(config());
  EXPECT_FALSE(s.nextWakeup());
  EXPECT_TRUE(s.idle());
  EXPECT_TRUE(s.take(at(1000)).empty());
}

TEST(TriggerSchedule, ABindThatCannotBreakARuleWaitsTheDebounce) {
  TriggerSchedule s(config());
  EXPECT_EQ(s.onEvent(added(web("web-1")), at(10)), "pod-bound");
  EXPECT_EQ(s.onEvent(added(web("web-2")), at(10.5)), "pod-bound");
  EXPECT_FALSE(s.idle());
  EXPECT_EQ(wake(s), 11) << "the debounce counts from the batch's first event";
  EXPECT_TRUE(s.take(at(10.99)).empty());
  DueWork due = s.take(at(11));
  ASSERT_EQ(due.seeds.pods.size(), 2u);
  EXPECT_EQ(due.seeds.pods[0].name, "web-1");
  EXPECT_EQ(due.seeds.pods[1].name, "web-2");
  EXPECT_EQ(secs(due.seedsFirstEvent), 10);
  EXPECT_FALSE(due.balance);
  EXPECT_TRUE(s.idle());
  EXPECT_FALSE(s.nextWakeup());
}

TEST(TriggerSchedule, ABoundCarrierOfAntiAffinityIsLookedAtAfterQuiet) {
  TriggerSchedule s(config());
  EXPECT_EQ(s.onEvent(added(payment()), at(10)), "pod-bound");
  EXPECT_EQ(wake(s), 10.2);
  EXPECT_TRUE(s.take(at(10.19)).empty());
  DueWork due = s.take(at(10.2));
  ASSERT_EQ(due.seeds.pods.size(), 1u);
  EXPECT_TRUE(due.seeds.pods[0].carriesAntiAffinity);
}

TEST(TriggerSchedule, APodATermInTheCacheCouldSelectIsLookedAtAfterQuiet) {
  const auto snapshot = ClusterBuilder().add(NodeBuilder("node2").build()).add(payment()).snapshot();
  TriggerSchedule s(config());
  s.seedCarriers(*snapshot);
  s.onEvent(added(order("order-1")), at(10));
  EXPECT_EQ(wake(s), 10.2) << "payment's term selects app=order";

  TriggerSchedule other(config());
  other.seedCarriers(*snapshot);
  other.onEvent(added(web("web-1")), at(10));
  EXPECT_EQ(wake(other), 11) << "no term selects app=web";
}

TEST(TriggerSchedule, TheCarriersFollowTheEvents) {
  TriggerSchedule s(config());
  // Not bound yet: nothing to look at, but its term is counted from now on.
  EXPECT_EQ(s.onEvent(added(PodBuilder("payment").app("payment").antiAffinity("app", "order").build()), at(1)), "");
  EXPECT_TRUE(s.idle());
  s.onEvent(added(order("order-1")), at(10));
  EXPECT_EQ(wake(s), 10.2);
  s.take(at(10.2));
  // Gone: its term selects nothing any more, so a bound order pod waits the debounce.
  EXPECT_EQ(s.onEvent(deleted(PodBuilder("payment").app("payment").antiAffinity("app", "order").build()), at(12)),
            "pod-deleted");
  s.onEvent(added(order("order-2")), at(20));
  EXPECT_EQ(wake(s), 21);
}

TEST(TriggerSchedule, ALaterEventThatMayBreakARuleBringsTheBatchForward) {
  TriggerSchedule s(config());
  s.onEvent(added(web("web-1")), at(10));
  EXPECT_EQ(wake(s), 11);
  s.onEvent(added(payment()), at(10.3));
  EXPECT_EQ(wake(s), 10.5) << "quiet after the first event that may break a rule";
  s.onEvent(added(PodBuilder("payment-2").node("node3").antiAffinity("app", "order").build()), at(10.4));
  EXPECT_EQ(wake(s), 10.5) << "a second one does not push it back";
  DueWork due = s.take(at(10.5));
  EXPECT_EQ(due.seeds.pods.size(), 3u);
  EXPECT_EQ(secs(due.seedsFirstEvent), 10);
}

TEST(TriggerSchedule, ButNeverPastTheDebounceOfTheBatchsFirstEvent) {
  TriggerSchedule s(config());
  s.onEvent(added(web("web-1")), at(10));
  s.onEvent(added(payment()), at(10.9));
  EXPECT_EQ(wake(s), 11) << "not 11.1";
}

TEST(TriggerSchedule, EachBatchStartsItsOwnTiming) {
  TriggerSchedule s(config());
  s.onEvent(added(payment()), at(10));
  ASSERT_EQ(s.take(at(10.2)).seeds.pods.size(), 1u);
  // The next batch has no event that may break a rule: the debounce of its own first event.
  s.onEvent(added(web("web-1")), at(10.5));
  EXPECT_EQ(wake(s), 11.5);
  DueWork due = s.take(at(11.5));
  ASSERT_EQ(due.seeds.pods.size(), 1u);
  EXPECT_EQ(secs(due.seedsFirstEvent), 10.5);
}

TEST(TriggerSchedule, ANodeChangeMayBreakARuleAReadinessChangeAsksForBalance) {
  const auto plain = NodeBuilder("node1").build();
  TriggerSchedule s(config());
  EXPECT_EQ(s.onEvent(nodeModified(plain, NodeBuilder("node1").label("disk", "ssd").build()), at(10)), "node-changed");
  EXPECT_EQ(wake(s), 10.2);
  DueWork due = s.take(at(10.2));
  ASSERT_EQ(due.seeds.nodes.size(), 1u);
  EXPECT_EQ(due.seeds.nodes[0].name, "node1");
  EXPECT_FALSE(due.seeds.nodes[0].taintsChanged);

  s.onEvent(nodeModified(plain, NodeBuilder("node1").taint("gpu", "yes", api::TaintEffect::NoSchedule).build()),
            at(20));
  due = s.take(at(20.2));
  ASSERT_EQ(due.seeds.nodes.size(), 1u);
  EXPECT_TRUE(due.seeds.nodes[0].taintsChanged);

  EXPECT_EQ(s.onEvent(nodeModified(plain, NodeBuilder("node1").notReady().build()), at(30)), "node-readiness");
  EXPECT_EQ(wake(s), 60) << "a balance run, no deschedule batch";
  EXPECT_TRUE(s.take(at(59)).empty());
}

TEST(TriggerSchedule, AStatusChangeCountsOnlyForTheStatusPlugins) {
  const auto before = PodBuilder("crashy").node("node1").restarts(0).build();
  const auto after = PodBuilder("crashy").node("node1").restarts(1).build();
  TriggerSchedule s(config());
  EXPECT_EQ(s.onEvent(modified(before, after), at(10)), "") << "no status plugin enabled";
  EXPECT_TRUE(s.idle());
  EXPECT_FALSE(s.nextWakeup());

  s.setInterest(trigger::Interest{.podStatus = true});
  EXPECT_EQ(s.onEvent(modified(before, after), at(20)), "pod-restarted");
  EXPECT_EQ(wake(s), 20.2) << "a status change may make the pod a candidate now";
  DueWork due = s.take(at(20.2));
  ASSERT_EQ(due.seeds.pods.size(), 1u);
  EXPECT_TRUE(due.seeds.pods[0].status);
}

TEST(TriggerSchedule, EventsThatCannotMatterAddNothing) {
  TriggerSchedule s(config());
  const auto n = NodeBuilder("node1").build();
  EXPECT_EQ(s.onEvent(cluster::Change<api::Node>{cluster::EventType::Deleted, n, nullptr}, at(1)), "");
  EXPECT_EQ(s.onEvent(nodeModified(n, NodeBuilder("node1").build()), at(1)), "");
  EXPECT_EQ(s.onEvent(modified(web("web-1"), web("web-1")), at(1)), "") << "neither bound nor relabelled";
  EXPECT_EQ(s.onEvent(added(PodBuilder("pending").build()), at(1)), "") << "not bound";
  EXPECT_TRUE(s.idle());
  EXPECT_FALSE(s.nextWakeup());
}

TEST(TriggerSchedule, TheCpuBudgetHoldsTheNextBatchBack) {
  TriggerSchedule s(config());
  // A run that ended at 10 s after 0.5 s of CPU: at a quarter of a core the next batch may start
  // 2 s after that run started (9.5 s), at 11.5 s.
  s.ran(at(10), seconds(0.5));
  s.onEvent(added(payment()), at(10.1));
  EXPECT_EQ(wake(s), 11.5);
  EXPECT_TRUE(s.take(at(11.49)).empty());
  EXPECT_EQ(s.take(at(11.5)).seeds.pods.size(), 1u);
  // A batch due after the budget runs when due.
  s.onEvent(added(web("web-1")), at(12));
  EXPECT_EQ(wake(s), 13);
}

TEST(TriggerSchedule, TheCpuBudgetDoesNotHoldBalanceBack) {
  TriggerSchedule s(config());
  s.ran(at(10), seconds(20));  // the next batch not before 70 s
  s.onEvent(deleted(web("web-1")), at(10));
  EXPECT_EQ(wake(s), 40);
  EXPECT_TRUE(s.take(at(40)).balance);
}

TEST(TriggerSchedule, ACpuShareOutsideZeroToOneIsAWholeCore) {
  for (double share : {0.0, -1.0, 2.0}) {
    policy::TriggerConfig c = config();
    c.cpuShare = share;
    TriggerSchedule s(c);
    s.ran(at(10), seconds(5));
    // Seen during the run: due at 9.7 s, but not before the run's end.
    s.onEvent(added(payment()), at(9.5));
    EXPECT_EQ(wake(s), 10) << share;
  }
}

TEST(TriggerSchedule, BalanceRunsOncePerWindowFromItsFirstEvent) {
  TriggerSchedule s(config());
  EXPECT_EQ(s.onEvent(deleted(web("web-1")), at(10)), "pod-deleted");
  EXPECT_FALSE(s.idle());
  EXPECT_EQ(wake(s), 40);
  s.onEvent(deleted(web("web-2")), at(20));
  s.requestBalance(at(25));
  EXPECT_EQ(wake(s), 40) << "later requests join the pending run";
  EXPECT_TRUE(s.take(at(39.9)).empty());
  DueWork due = s.take(at(40));
  EXPECT_TRUE(due.balance);
  EXPECT_EQ(secs(due.balanceFirstEvent), 10);
  EXPECT_TRUE(due.seeds.empty());
  EXPECT_TRUE(s.idle());

  s.requestBalance(at(50));
  EXPECT_EQ(wake(s), 80) << "a new window";
  due = s.take(at(80));
  EXPECT_TRUE(due.balance);
  EXPECT_EQ(secs(due.balanceFirstEvent), 50);
  EXPECT_TRUE(s.idle());
}

TEST(TriggerSchedule, TheDeschedulingSeedsNeverCarryTheBalanceFlag) {
  TriggerSchedule s(config());
  s.onEvent(deleted(web("web-1")), at(10));
  s.onEvent(added(payment()), at(10));
  DueWork due = s.take(at(10.2));
  EXPECT_EQ(due.seeds.pods.size(), 1u);
  EXPECT_FALSE(due.seeds.balance);
  EXPECT_FALSE(due.balance) << "the balance run keeps its own window";
  EXPECT_EQ(wake(s), 40);
}

TEST(TriggerSchedule, ADeferredCandidateKeepsItsPlace) {
  TriggerSchedule s(config());
  s.defer(Deferred{.pod = podName("default/a"), .plugins = {"X"}, .due = at(20), .firstEvent = at(5)});
  s.defer(Deferred{.pod = podName("default/b"), .plugins = {"Y"}, .due = at(15), .firstEvent = at(6)});
  s.defer(
      Deferred{.pod = podName("default/a"), .plugins = {"Z"}, .due = at(12), .firstEvent = at(7)});  // already waiting
  EXPECT_FALSE(s.idle());
  EXPECT_EQ(wake(s), 15);
  DueWork due = s.take(at(15));
  ASSERT_EQ(due.deferred.size(), 1u);
  EXPECT_EQ(due.deferred[0].pod, podName("default/b"));
  EXPECT_EQ(wake(s), 20);
  due = s.take(at(20));
  ASSERT_EQ(due.deferred.size(), 1u);
  EXPECT_EQ(due.deferred[0].pod, podName("default/a"));
  EXPECT_EQ(due.deferred[0].plugins, std::set<std::string>{"X"});
  EXPECT_EQ(secs(due.deferred[0].firstEvent), 5);
  EXPECT_TRUE(s.idle());
}

TEST(TriggerSchedule, DeferredCandidatesDueTogetherComeInTheOrderTheyWereDeferred) {
  TriggerSchedule s(config());
  s.defer(deferredTo("default/c", 30));
  s.defer(deferredTo("default/d", 25));
  s.defer(deferredTo("default/e", 40));
  DueWork due = s.take(at(30));
  ASSERT_EQ(due.deferred.size(), 2u);
  EXPECT_EQ(due.deferred[0].pod, podName("default/c"));
  EXPECT_EQ(due.deferred[1].pod, podName("default/d"));
  EXPECT_EQ(wake(s), 40);
}

TEST(TriggerSchedule, DeadlinesAreKeptWithinTheHorizon) {
  TriggerSchedule s(config());
  EXPECT_TRUE(
      s.setDeadline(podName("default/a"), DeadlineEntry{podName("default/a"), {"PodLifeTime"}, at(100)}, at(0)));
  EXPECT_TRUE(s.setDeadline(podName("default/b"), DeadlineEntry{podName("default/b"), {"PodLifeTime"}, at(600)}, at(0)))
      << "at the horizon";
  EXPECT_FALSE(
      s.setDeadline(podName("default/c"), DeadlineEntry{podName("default/c"), {"PodLifeTime"}, at(600.5)}, at(0)))
      << "beyond it: left to a rescan";
  EXPECT_EQ(s.deadlineCount(), 2u);
  // A pod whose deadline moved beyond the horizon loses the one it had.
  EXPECT_FALSE(
      s.setDeadline(podName("default/b"), DeadlineEntry{podName("default/b"), {"PodLifeTime"}, at(700)}, at(0)));
  EXPECT_EQ(s.deadlineCount(), 1u);
  // The horizon counts from the call's time.
  EXPECT_TRUE(
      s.setDeadline(podName("default/b"), DeadlineEntry{podName("default/b"), {"PodLifeTime"}, at(700)}, at(100)));
  EXPECT_EQ(s.deadlineCount(), 2u);
  EXPECT_TRUE(s.setDeadline(podName("default/b"), std::nullopt, at(100))) << "cleared";
  EXPECT_EQ(s.deadlineCount(), 1u);

  EXPECT_TRUE(s.idle()) << "a deadline waits on the clock, not on work in hand";
  EXPECT_EQ(wake(s), 100);
  EXPECT_TRUE(s.take(at(99)).deadlines.empty());
  DueWork due = s.take(at(100));
  ASSERT_EQ(due.deadlines.size(), 1u);
  EXPECT_EQ(due.deadlines[0].pod, podName("default/a"));
  EXPECT_EQ(due.deadlines[0].plugins, std::set<std::string>{"PodLifeTime"});
  EXPECT_EQ(s.deadlineCount(), 0u);
  EXPECT_FALSE(s.nextWakeup());
}

TEST(TriggerSchedule, ARescanIsDueOnce) {
  TriggerSchedule s(config());
  s.scheduleRescan(at(300));
  EXPECT_TRUE(s.idle());
  EXPECT_EQ(wake(s), 300);
  EXPECT_FALSE(s.take(at(299)).rescan);
  EXPECT_TRUE(s.take(at(300)).rescan);
  EXPECT_FALSE(s.take(at(301)).rescan);
  EXPECT_FALSE(s.nextWakeup());
}

TEST(TriggerSchedule, TheWakeupIsTheEarliestOfEverythingPending) {
  TriggerSchedule s(config());
  s.onEvent(added(web("web-1")), at(0));    // batch at 1
  s.onEvent(deleted(web("web-2")), at(0));  // balance at 30
  s.defer(deferredTo("default/x", 0.5));
  s.scheduleRescan(at(0.6));
  s.setDeadline(podName("default/y"), DeadlineEntry{podName("default/y"), {}, at(0.7)}, at(0));
  EXPECT_EQ(wake(s), 0.5);
  EXPECT_EQ(s.take(at(0.5)).deferred.size(), 1u);
  EXPECT_EQ(wake(s), 0.6);
  EXPECT_TRUE(s.take(at(0.6)).rescan);
  EXPECT_EQ(wake(s), 0.7);
  EXPECT_EQ(s.take(at(0.7)).deadlines.size(), 1u);
  EXPECT_EQ(wake(s), 1);
  EXPECT_EQ(s.take(at(1)).seeds.pods.size(), 1u);
  EXPECT_EQ(wake(s), 30);
  EXPECT_TRUE(s.take(at(30)).balance);
  EXPECT_FALSE(s.nextWakeup());
  EXPECT_TRUE(s.idle());
}

TEST(TriggerSchedule, EverythingDueAtOnceComesInOneTake) {
  TriggerSchedule s(config());
  s.onEvent(added(web("web-1")), at(0));
  s.onEvent(deleted(web("web-2")), at(0));
  s.defer(deferredTo("default/x", 0.5));
  s.scheduleRescan(at(0.6));
  s.setDeadline(podName("default/y"), DeadlineEntry{podName("default/y"), {}, at(0.7)}, at(0));
  DueWork due = s.take(at(100));
  EXPECT_EQ(due.seeds.pods.size(), 1u);
  EXPECT_TRUE(due.balance);
  EXPECT_EQ(due.deferred.size(), 1u);
  EXPECT_TRUE(due.rescan);
  EXPECT_EQ(due.deadlines.size(), 1u);
  EXPECT_TRUE(s.idle());
  EXPECT_FALSE(s.nextWakeup());
}

}  // namespace
}  // namespace kdesched::testing
