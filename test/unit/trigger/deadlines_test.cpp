// The deadline queue, and TriggeredRuns looking at a pod when time alone makes it a candidate,
// stepped by a fake clock with the real PodLifeTime and RemoveFailedPods plugins.
#include "pkg/trigger/deadlines.h"

#include <gtest/gtest.h>

#include "pkg/plugins/podlifetime/podlifetime.h"
#include "pkg/trigger/interest.h"
#include "pkg/trigger/triggered_runs.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using trigger::DeadlineEntry;
using trigger::DeadlineQueue;

Clock::TimePoint at(double s) { return Clock::TimePoint{} + seconds(s); }

TEST(DeadlineQueue, TakesWhatIsDueEarliestFirstAndReplacesByPod) {
  DeadlineQueue q(10);
  q.set({podName("ns/b"), {"PodLifeTime"}, at(20)});
  q.set({podName("ns/a"), {"PodLifeTime"}, at(10)});
  q.set({podName("ns/c"), {"PodLifeTime"}, at(30)});
  q.set({podName("ns/c"), {"RemoveFailedPods"}, at(5)});  // replaced, not added
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(*q.next(), at(5));
  auto due = q.take(at(20));
  ASSERT_EQ(due.size(), 3u);
  EXPECT_EQ(due[0].pod, podName("ns/c"));
  EXPECT_EQ(due[0].plugins, std::set<std::string>{"RemoveFailedPods"});
  EXPECT_EQ(due[1].pod, podName("ns/a"));
  EXPECT_EQ(due[2].pod, podName("ns/b"));
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.next());
}

TEST(DeadlineQueue, WhenFullTheLatestDeadlineGoes) {
  DeadlineQueue q(2);
  EXPECT_TRUE(q.set({podName("ns/a"), {}, at(10)}));
  EXPECT_TRUE(q.set({podName("ns/b"), {}, at(30)}));
  EXPECT_TRUE(q.set({podName("ns/c"), {}, at(20)}));   // b goes
  EXPECT_FALSE(q.set({podName("ns/d"), {}, at(40)}));  // later than all: left out
  EXPECT_EQ(q.size(), 2u);
  auto due = q.take(at(100));
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].pod, podName("ns/a"));
  EXPECT_EQ(due[1].pod, podName("ns/c"));
  q.set({podName("ns/a"), {}, at(10)});
  q.erase(podName("ns/a"));
  q.erase(podName("ns/never"));
  EXPECT_TRUE(q.empty());
}

struct Recorder : trigger::ScopedRunner {
  std::vector<framework::CycleScope> runs;
  void runScoped(const framework::CycleScope& s, Clock::TimePoint, trigger::RunSnapshot) override { runs.push_back(s); }
};

struct DeadlineTest : ::testing::Test {
  cluster::Store store;
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  Recorder rec;
  std::optional<engine::Engine> engine;
  std::unique_ptr<trigger::TriggeredRuns> triggered;

  api::Timestamp wallSeconds() {
    return std::chrono::floor<std::chrono::seconds>(clock->wallNow().time_since_epoch()).count();
  }
  void start(const std::string& plugin, const std::string& args, policy::TriggerConfig c = {},
             const std::string& topLevel = "") {
    auto e = engineFor(policyWith(plugin, "deschedule", args, "", topLevel));
    ASSERT_TRUE(e.isOk()) << e.error();
    engine.emplace(std::move(e.value()));
    triggered = std::make_unique<trigger::TriggeredRuns>(store, c, rec, clock);
    triggered->setInterest(trigger::interestOf(engine->profiles));
    triggered->setDeadlines(trigger::deadlinesOf(engine->profiles));
    triggered->subscribe();
  }
};

TEST_F(DeadlineTest, APodIsLookedAtTheSecondItOutlivesMaxPodLifeTime) {
  store.upsert(NodeBuilder("node1").build());
  store.upsert(PodBuilder("old").node("node1").created(wallSeconds() - 5).build());
  store.upsert(PodBuilder("older").node("node1").created(wallSeconds() - 100).build());  // already a candidate
  const Clock::TimePoint t0 = clock->now();
  start("PodLifeTime", "          maxPodLifeTimeSeconds: 20\n");
  // age > 20 s first holds at creation + 21 s: 16 s from now, plus the 50 ms margin.
  ASSERT_TRUE(triggered->nextWakeup());
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(16.05));
  clock->advanceSeconds(16);
  EXPECT_FALSE(triggered->runDue());
  clock->advanceSeconds(0.05);
  EXPECT_TRUE(triggered->runDue());
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_EQ(sortedKeys(*rec.runs[0].pods), std::vector<std::string>{"default/old"});
  EXPECT_EQ(rec.runs[0].plugins, std::vector<std::string>{"PodLifeTime"});
  EXPECT_FALSE(rec.runs[0].runBalance);
}

// With a lifetime jitter the queue wakes when the pod's own lifetime ends: maxPodLifeTimeSeconds
// plus its share of the jitter, not at the bare maximum.
TEST_F(DeadlineTest, WithJitterAPodIsLookedAtWhenItsOwnLifetimeEnds) {
  store.upsert(NodeBuilder("node1").build());
  auto pod =
      PodBuilder("web").node("node1").uid("0d4b7a3c-5e2f-4c1a-9b8d-7f6e5d4c3b2a").created(wallSeconds() - 5).build();
  store.upsert(pod);
  const double extra = static_cast<double>(plugins::podlifetime::LifetimeJitter{60}.extraSeconds(*pod));
  ASSERT_GT(extra, 0);
  const Clock::TimePoint t0 = clock->now();
  start("PodLifeTime", "          maxPodLifeTimeSeconds: 20\n", {}, "kdesched:\n  podLifeTime: {jitter: 1m}\n");
  ASSERT_TRUE(triggered->nextWakeup());
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(16.05 + extra));
  clock->advanceSeconds(16.05);
  EXPECT_FALSE(triggered->runDue());
  EXPECT_TRUE(rec.runs.empty());
  clock->advanceSeconds(extra);
  EXPECT_TRUE(triggered->runDue());
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_EQ(sortedKeys(*rec.runs[0].pods), std::vector<std::string>{"default/web"});
}

TEST_F(DeadlineTest, DeadlinesBeyondTheHorizonWaitForARescan) {
  store.upsert(NodeBuilder("node1").build());
  store.upsert(PodBuilder("web").node("node1").created(wallSeconds()).build());
  policy::TriggerConfig c;
  c.deadlineHorizonSeconds = 600;
  const Clock::TimePoint t0 = clock->now();
  start("PodLifeTime", "          maxPodLifeTimeSeconds: 1000\n", c);
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(300));  // the rescan, not the deadline
  clock->advanceSeconds(300);
  EXPECT_TRUE(triggered->runDue());  // rescan at 300 s: 1001 s is still beyond 900 s
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(600));
  clock->advanceSeconds(300);
  EXPECT_TRUE(triggered->runDue());  // rescan at 600 s: now within the horizon
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(900));
  clock->advanceSeconds(300);
  EXPECT_TRUE(triggered->runDue());
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(1001.05));
  EXPECT_TRUE(rec.runs.empty());
  clock->advanceSeconds(101.05);
  EXPECT_TRUE(triggered->runDue());
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_EQ(sortedKeys(*rec.runs[0].pods), std::vector<std::string>{"default/web"});
}

TEST_F(DeadlineTest, AFailedPodIsQueuedForMinPodLifetimeAndForgottenWhenDeleted) {
  store.upsert(NodeBuilder("node1").build());
  store.upsert(PodBuilder("job").node("node1").created(wallSeconds() - 10).build());
  const Clock::TimePoint t0 = clock->now();
  start("RemoveFailedPods", "          minPodLifetimeSeconds: 60\n");
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(300));  // running: no deadline, only the rescan
  store.upsert(PodBuilder("job").node("node1").created(wallSeconds() - 10).phase(api::PodPhase::Failed).build());
  clock->advanceSeconds(0.2);
  EXPECT_TRUE(triggered->runDue());  // the failure itself: a scoped run (too young to go)
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(50.05));  // 60 s after creation
  store.remove(api::Kind::Pod, "default/job");
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(30.2));  // the deletion's balance run, no deadline
}

TEST_F(DeadlineTest, AConditionDeadlineWaitsForTheAgeToo) {
  store.upsert(NodeBuilder("node1").build());
  // Age passes 30 s at +26 s; the condition reaches 60 s at +40 s: due at the later one.
  store.upsert(PodBuilder("stuck")
                   .node("node1")
                   .created(wallSeconds() - 5)
                   .condition("PodScheduled", "False", "Unschedulable", wallSeconds() - 20)
                   .build());
  const Clock::TimePoint t0 = clock->now();
  start("PodLifeTime",
        "          maxPodLifeTimeSeconds: 30\n"
        "          conditions:\n"
        "          - type: PodScheduled\n"
        "            status: \"False\"\n"
        "            minTimeSinceLastTransitionSeconds: 60\n");
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(40.05));
}

// MakeRoomForPendingPods: an unbound pod the scheduler gave up on is looked at minPendingSeconds
// after it did, in a scoped run naming it.
TEST_F(DeadlineTest, APendingPodIsLookedAtWhenMinPendingSecondsHavePassed) {
  store.upsert(NodeBuilder("node1").build());
  store.upsert(PodBuilder("big")
                   .phase(api::PodPhase::Pending)
                   .notReady()
                   .noStartTime()
                   .created(wallSeconds() - 30)
                   .condition("PodScheduled", "False", "Unschedulable", wallSeconds() - 20)
                   .build());
  const Clock::TimePoint t0 = clock->now();
  start("MakeRoomForPendingPods", "          minPendingSeconds: 60\n");
  ASSERT_TRUE(triggered->nextWakeup());
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(40.05));
  clock->advanceSeconds(40.05);
  EXPECT_TRUE(triggered->runDue());
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_EQ(sortedKeys(*rec.runs[0].pods), std::vector<std::string>{"default/big"});
  EXPECT_EQ(rec.runs[0].plugins, std::vector<std::string>{"MakeRoomForPendingPods"});
}

// A capacity change (a pod gone) runs the balance plugins after the debounce, then, with
// MakeRoomForPendingPods enabled, that plugin for every unbound pending pod.
TEST_F(DeadlineTest, ACapacityChangeLooksAtThePendingPods) {
  store.upsert(NodeBuilder("node1").build());
  store.upsert(PodBuilder("small").node("node1").build());
  store.upsert(PodBuilder("big")
                   .phase(api::PodPhase::Pending)
                   .notReady()
                   .noStartTime()
                   .created(wallSeconds() - 600)
                   .condition("PodScheduled", "False", "Unschedulable", wallSeconds() - 500)
                   .build());
  start("MakeRoomForPendingPods", "");
  store.remove(api::Kind::Pod, "default/small");
  clock->advanceSeconds(30);
  EXPECT_TRUE(triggered->runDue());
  ASSERT_EQ(rec.runs.size(), 2u);
  EXPECT_FALSE(rec.runs[0].runDeschedule);  // the balance run
  ASSERT_TRUE(rec.runs[1].pods);
  EXPECT_EQ(sortedKeys(*rec.runs[1].pods), std::vector<std::string>{"default/big"});
  EXPECT_EQ(rec.runs[1].plugins, std::vector<std::string>{"MakeRoomForPendingPods"});
  EXPECT_FALSE(rec.runs[1].runBalance);
}

// The other deadline plugins judge bound pods only: an unbound pod gets no deadline from them.
TEST_F(DeadlineTest, PodLifeTimeIsNotAskedAboutAnUnboundPod) {
  store.upsert(PodBuilder("waiting").phase(api::PodPhase::Pending).created(wallSeconds() - 5).build());
  const Clock::TimePoint t0 = clock->now();
  start("PodLifeTime", "          maxPodLifeTimeSeconds: 20\n");
  ASSERT_TRUE(triggered->nextWakeup());
  EXPECT_EQ(*triggered->nextWakeup(), t0 + seconds(300));  // the rescan only
}

}  // namespace
}  // namespace kdesched::testing
