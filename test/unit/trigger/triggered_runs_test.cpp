// TriggeredRuns stepped by a fake clock: events at made-up times, runDue() at made-up times. Only the
// last test starts the driver thread, and it waits on a condition (drain), never on a time window.
#include "pkg/trigger/triggered_runs.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::testing {
namespace {

struct Recorder : trigger::ScopedRunner {
  std::mutex mu;
  std::vector<framework::CycleScope> runs;
  std::vector<Clock::TimePoint> firstEvents;
  std::vector<cluster::SnapshotPtr> snapshots;
  // Each run uses `cpu` seconds of CPU and waits `wait` more (for eviction answers): the fake
  // clock moves by both, the fake CPU clock by `cpu` alone.
  std::shared_ptr<FakeClock> clock;
  std::shared_ptr<FakeCpuClock> cpuClock;
  double cpu = 0, wait = 0;
  void runScoped(const framework::CycleScope& s, Clock::TimePoint firstEvent, trigger::RunSnapshot taken) override {
    std::lock_guard<std::mutex> lock(mu);
    runs.push_back(s);
    firstEvents.push_back(firstEvent);
    snapshots.push_back(std::move(taken.snapshot));
    if (clock) clock->advanceSeconds(cpu + wait);
    if (cpuClock) cpuClock->chargeSeconds(cpu);
  }
  std::size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return runs.size();
  }
};

policy::TriggerConfig config() {
  policy::TriggerConfig c;
  c.debounceSeconds = 1;
  c.quietSeconds = 0.2;
  c.balanceDebounceSeconds = 30;
  c.rolloutGraceSeconds = 15;
  return c;
}

// Five payment pods on node2 that refuse app=order next to them.
void addPayments(cluster::Store& store) {
  store.upsert(NodeBuilder("node1").build());
  store.upsert(NodeBuilder("node2").build());
  for (int i = 0; i < 5; ++i)
    store.upsert(PodBuilder("payment-" + std::to_string(i))
                     .app("payment")
                     .ownerUid("ReplicaSet", "p" + std::to_string(i), "u" + std::to_string(i))
                     .node("node2")
                     .antiAffinity("app", "order")
                     .build());
}

void bindOrder(cluster::Store& store, int i) {
  store.upsert(PodBuilder("order-" + std::to_string(i)).app("order").node("node2").build());
}

struct TriggeredRunsTest : ::testing::Test {
  cluster::Store store;
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  Recorder rec;
};

TEST_F(TriggeredRunsTest, ABurstWithinQuietOfItsFirstEventMakesOneScopedRun) {
  addPayments(store);
  trigger::TriggeredRuns triggered(store, config(), rec, clock);
  triggered.subscribe();
  const Clock::TimePoint first = clock->now();
  for (int i = 0; i < 20; ++i) {
    bindOrder(store, i);
    clock->advanceSeconds(0.005);  // 20 binds, 5 ms apart
    EXPECT_FALSE(triggered.runDue()) << i;
  }
  ASSERT_TRUE(triggered.nextWakeup());
  // Quiet after the first bind, not after the last: later events do not push a violation back.
  EXPECT_EQ(*triggered.nextWakeup(), first + seconds(0.2));
  clock->advanceSeconds(0.08);
  EXPECT_FALSE(triggered.runDue());
  clock->advanceSeconds(0.02);
  EXPECT_TRUE(triggered.runDue());
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_FALSE(rec.runs[0].runBalance);
  EXPECT_EQ(rec.runs[0].pods->size(), 5u);
  EXPECT_EQ(rec.runs[0].plugins, std::vector<std::string>{trigger::kAntiAffinityPlugin});
  EXPECT_EQ(rec.firstEvents[0], first);
  EXPECT_FALSE(triggered.nextWakeup());
}

TEST_F(TriggeredRunsTest, AStreamOfViolationsIsLookedAtWithinQuietOfEachBatchsFirstEvent) {
  addPayments(store);
  trigger::TriggeredRuns triggered(store, config(), rec, clock);
  triggered.subscribe();
  const Clock::TimePoint first = clock->now();
  for (int i = 0; i < 10; ++i) {
    bindOrder(store, i);  // every 0.1 s, never a pause
    clock->advanceSeconds(0.1);
    triggered.runDue();
  }
  // Runs at 0.2, 0.4, ... 1.0 s, each batch started by the bind after the previous run.
  ASSERT_EQ(rec.runs.size(), 5u);
  for (std::size_t i = 0; i < rec.runs.size(); ++i)
    EXPECT_EQ(rec.firstEvents[i], first + seconds(0.2 * static_cast<double>(i))) << i;
  // The run was handed the snapshot TriggeredRuns chose its pods from (one index build, not two).
  ASSERT_TRUE(rec.snapshots.back());
  EXPECT_EQ(rec.snapshots.back(), store.snapshot());
}

TEST_F(TriggeredRunsTest, TheCpuBudgetSpacesRunsUnderSustainedViolations) {
  addPayments(store);
  policy::TriggerConfig c = config();
  c.cpuShare = 0.1;
  auto cpu = std::make_shared<FakeCpuClock>();
  rec.clock = clock;
  rec.cpuClock = cpu;
  rec.cpu = 0.05;  // each run uses 50 ms of CPU
  trigger::TriggeredRuns triggered(store, c, rec, clock, nullptr, nullptr, cpu);
  triggered.subscribe();
  const Clock::TimePoint first = clock->now();
  bindOrder(store, 0);
  clock->advanceSeconds(0.2);
  EXPECT_TRUE(triggered.runDue());  // ran 0.2 .. 0.25 s
  EXPECT_EQ(clock->now(), first + seconds(0.25));
  bindOrder(store, 1);  // quiet says 0.45 s; 50 ms at a 10% share says no run before 0.7 s
  EXPECT_EQ(*triggered.nextWakeup(), first + seconds(0.7));
  clock->advanceSeconds(0.4);
  EXPECT_FALSE(triggered.runDue());
  clock->advanceSeconds(0.05);
  EXPECT_TRUE(triggered.runDue());  // ran 0.7 .. 0.75 s: the next batch waits until 1.2 s
  EXPECT_EQ(rec.runs.size(), 2u);
  // Waiting is not charged: a run of 1 ms CPU that waits 300 ms for eviction answers holds the
  // next batch 9 ms past its end, not 2.7 s.
  clock->advanceSeconds(0.45);
  rec.cpu = 0.001;
  rec.wait = 0.3;
  bindOrder(store, 2);
  clock->advanceSeconds(0.2);
  EXPECT_TRUE(triggered.runDue());
  const Clock::TimePoint end = clock->now();
  bindOrder(store, 3);
  EXPECT_EQ(*triggered.nextWakeup(), end + seconds(0.2));  // its quiet: later than end + 9 ms
  clock->advanceSeconds(0.2);
  EXPECT_TRUE(triggered.runDue());
  EXPECT_EQ(rec.runs.size(), 4u);
}

// Churn that cannot break an anti-affinity rule: web pods relabelled, every 10 ms.
void relabelWeb(cluster::Store& store, int i) {
  store.upsert(
      PodBuilder("web-" + std::to_string(i % 7)).app("web").label("rev", std::to_string(i)).node("node1").build());
}

TEST_F(TriggeredRunsTest, AViolationAmidChurnRunsAQuietAfterItsOwnEventNotAtTheDebounce) {
  addPayments(store);  // carriers in the store before subscribe: counted from the snapshot
  for (int i = 0; i < 7; ++i) relabelWeb(store, i);
  trigger::TriggeredRuns triggered(store, config(), rec, clock);
  triggered.subscribe();
  const Clock::TimePoint first = clock->now();
  for (int i = 0; i < 100; ++i) {
    relabelWeb(store, 7 + i);
    if (i == 30) bindOrder(store, 0);  // the violation, at 0.3 s
    clock->advanceSeconds(0.01);
    if (triggered.runDue()) break;
  }
  ASSERT_EQ(rec.runs.size(), 1u);
  // Due at 0.3 s + quiet: the relabels around it do not hold it back to the 1 s debounce.
  EXPECT_EQ(clock->now(), first + seconds(0.5));
  EXPECT_EQ(rec.runs[0].pods->size(), 5u);
  EXPECT_EQ(rec.firstEvents[0], first);
}

TEST_F(TriggeredRunsTest, ChurnAloneRunsAtTheDebounce) {
  trigger::TriggeredRuns triggered(store, config(), rec, clock);
  triggered.subscribe();
  addPayments(store);  // carriers arriving as events are counted too
  clock->advanceSeconds(1);
  triggered.runDue();
  rec.runs.clear();
  const Clock::TimePoint first = clock->now();
  relabelWeb(store, 0);
  EXPECT_EQ(*triggered.nextWakeup(), first + seconds(1));
  clock->advanceSeconds(0.5);
  bindOrder(store, 1);  // a pod the payments' terms select: now the quiet applies
  EXPECT_EQ(*triggered.nextWakeup(), first + seconds(0.7));
}

TEST_F(TriggeredRunsTest, AWildcardTermMakesEveryPodEventCount) {
  api::LabelSelector notIn;
  notIn.matchExpressions.push_back({"app", api::LabelSelectorOp::NotIn, {"payment"}});
  api::PodAffinityTerm term;
  term.labelSelector = notIn;
  term.topologyKey = "kubernetes.io/hostname";
  store.upsert(NodeBuilder("node1").build());
  store.upsert(PodBuilder("loner").label("team", "a").node("node1").antiAffinityTerm(term).build());
  trigger::TriggeredRuns triggered(store, config(), rec, clock);
  triggered.subscribe();
  const Clock::TimePoint first = clock->now();
  store.upsert(PodBuilder("x").label("team", "b").node("node1").build());  // no app label: selected
  EXPECT_EQ(*triggered.nextWakeup(), first + seconds(0.2));
}

TEST_F(TriggeredRunsTest, MidRolloutCandidatesWaitForTheGraceWindow) {
  store.upsert(NodeBuilder("node1").build());
  store.upsert(NodeBuilder("node2").build());
  // payment's own ReplicaSet has a sibling still starting: a rollout is under way.
  store.upsert(PodBuilder("payment-a")
                   .app("payment")
                   .ownerUid("ReplicaSet", "rs", "rs-uid")
                   .node("node2")
                   .antiAffinity("app", "order")
                   .build());
  store.upsert(PodBuilder("payment-b")
                   .app("payment")
                   .ownerUid("ReplicaSet", "rs", "rs-uid")
                   .phase(api::PodPhase::Pending)
                   .build());
  trigger::TriggeredRuns triggered(store, config(), rec, clock);
  triggered.subscribe();
  const Clock::TimePoint first = clock->now();
  store.upsert(PodBuilder("order").app("order").node("node2").build());
  clock->advanceSeconds(0.2);
  EXPECT_TRUE(triggered.runDue());
  EXPECT_TRUE(rec.runs.empty());  // deferred
  EXPECT_EQ(*triggered.nextWakeup(), first + seconds(0.2) + seconds(15));
  clock->advanceSeconds(14.9);
  EXPECT_FALSE(triggered.runDue());
  clock->advanceSeconds(0.1);
  EXPECT_TRUE(triggered.runDue());
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_EQ(rec.runs[0].pods->count(podName("default/payment-a")), 1u);
  EXPECT_EQ(rec.firstEvents[0], first) << "the delay counts from the event, not from the deferral";
}

TEST_F(TriggeredRunsTest, DeletionsMakeADebouncedBalanceRun) {
  store.upsert(NodeBuilder("node1").build());
  for (int i = 0; i < 10; ++i) store.upsert(PodBuilder("p" + std::to_string(i)).node("node1").build());
  std::vector<std::string> kinds;
  trigger::TriggeredRuns triggered(store, config(), rec, clock, [&](const std::string& k) { kinds.push_back(k); });
  triggered.subscribe();
  for (int i = 0; i < 10; ++i) {
    store.remove(api::Kind::Pod, "default/p" + std::to_string(i));
    clock->advanceSeconds(1);
  }
  EXPECT_EQ(kinds.size(), 10u);
  EXPECT_FALSE(triggered.runDue());
  clock->advanceSeconds(20);  // 30 s after the first deletion
  EXPECT_TRUE(triggered.runDue());
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_FALSE(rec.runs[0].runDeschedule);
  EXPECT_TRUE(rec.runs[0].runBalance);
  EXPECT_FALSE(triggered.nextWakeup());
}

TEST_F(TriggeredRunsTest, APodBoundBesideItsDuplicateMakesADebouncedBalanceRun) {
  store.upsert(NodeBuilder("node1").build());
  store.upsert(PodBuilder("web-1").ownerUid("ReplicaSet", "web", "rs1").node("node1").build());
  trigger::TriggeredRuns triggered(store, config(), rec, clock);
  triggered.subscribe();
  store.upsert(PodBuilder("web-2").ownerUid("ReplicaSet", "web", "rs1").node("node1").build());
  clock->advanceSeconds(0.2);
  EXPECT_FALSE(triggered.runDue());  // no anti-affinity term can select web-2: the batch waits the debounce
  clock->advanceSeconds(0.8);
  EXPECT_TRUE(triggered.runDue());  // the deschedule batch: nothing in scope, a balance run asked for
  EXPECT_TRUE(rec.runs.empty());
  ASSERT_TRUE(triggered.nextWakeup());
  clock->advanceSeconds(30);
  EXPECT_TRUE(triggered.runDue());
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_TRUE(rec.runs[0].runBalance);
  EXPECT_FALSE(rec.runs[0].runDeschedule);
}

TEST_F(TriggeredRunsTest, RetryLaterLooksAtTheCandidateAgainOnce) {
  trigger::TriggeredRuns triggered(store, config(), rec, clock);
  const Clock::TimePoint start = clock->now();
  triggered.retryLater(podName("default/payment"), {trigger::kAntiAffinityPlugin}, 300);
  triggered.retryLater(podName("default/payment"), {trigger::kAntiAffinityPlugin}, 600);  // already waiting
  clock->advanceSeconds(299);
  EXPECT_FALSE(triggered.runDue());
  clock->advanceSeconds(1);
  EXPECT_TRUE(triggered.runDue());
  ASSERT_EQ(rec.runs.size(), 1u);
  // The 300 s were the gate's wait (a cooldown, a budget window), not a slow reaction: the
  // event-to-eviction delay counts from when it ended.
  EXPECT_EQ(rec.firstEvents[0], start + seconds(300));
  EXPECT_EQ(sortedKeys(*rec.runs[0].pods), std::vector<std::string>{"default/payment"});
  EXPECT_FALSE(triggered.nextWakeup());
}

TEST_F(TriggeredRunsTest, TheDriverRunsWhatComesDueByTheClock) {
  addPayments(store);
  trigger::TriggeredRuns triggered(store, config(), rec, clock);
  triggered.start();
  bindOrder(store, 0);
  EXPECT_EQ(rec.count(), 0u);
  clock->advanceSeconds(0.2);
  triggered.wake();
  triggered.drain();  // returns once the run is done: nothing pending, nothing running
  EXPECT_EQ(rec.count(), 1u);
  triggered.stop();
}

}  // namespace
}  // namespace kdesched::testing
