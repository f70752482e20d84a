#include "pkg/trigger/planner.h"

#include <gtest/gtest.h>

#include <thread>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

struct Recorded {
  std::mutex mu;
  std::vector<framework::CycleScope> runs;
};

trigger::TriggerConfig fast() {
  trigger::TriggerConfig c;
  c.debounceSeconds = 0.05;
  c.quietSeconds = 0.05;
  c.balanceDebounceSeconds = 0.2;
  c.rolloutGraceSeconds = 0.1;
  return c;
}

TEST(Planner, ABurstOfEventsMakesOneScopedRun) {
  cluster::Store store;
  store.upsert(NodeBuilder("node1").build());
  store.upsert(NodeBuilder("node2").build());
  for (int i = 0; i < 5; ++i)
    store.upsert(PodBuilder("payment-" + std::to_string(i))
                     .app("payment")
                     .ownerUid("ReplicaSet", "p" + std::to_string(i), "u" + std::to_string(i))
                     .node("node2")
                     .antiAffinity("app", "order")
                     .build());
  Recorded rec;
  trigger::Planner planner(store, fast(), [&](const framework::CycleScope& s, trigger::Planner::TimePoint) {
    std::lock_guard<std::mutex> lock(rec.mu);
    rec.runs.push_back(s);
  });
  planner.start();
  for (int i = 0; i < 20; ++i)
    store.upsert(PodBuilder("order-" + std::to_string(i)).app("order").node("node2").build());
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  planner.drain();
  planner.stop();
  std::lock_guard<std::mutex> lock(rec.mu);
  ASSERT_EQ(rec.runs.size(), 1u);  // 20 binds within the debounce window: one run
  EXPECT_FALSE(rec.runs[0].runBalance);
  EXPECT_EQ(rec.runs[0].pods->size(), 5u);
  EXPECT_EQ(rec.runs[0].plugins, std::vector<std::string>{trigger::kAntiAffinityPlugin});
}

TEST(Planner, MidRolloutCandidatesWaitForTheGraceWindow) {
  cluster::Store store;
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
  Recorded rec;
  trigger::Planner planner(store, fast(), [&](const framework::CycleScope& s, trigger::Planner::TimePoint) {
    std::lock_guard<std::mutex> lock(rec.mu);
    rec.runs.push_back(s);
  });
  planner.start();
  store.upsert(PodBuilder("order").app("order").node("node2").build());
  std::this_thread::sleep_for(std::chrono::milliseconds(90));
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    EXPECT_TRUE(rec.runs.empty());  // deferred
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  planner.drain();
  planner.stop();
  std::lock_guard<std::mutex> lock(rec.mu);
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_EQ(rec.runs[0].pods->count("default/payment-a"), 1u);
}

TEST(Planner, DeletionsMakeADebouncedBalanceRun) {
  cluster::Store store;
  store.upsert(NodeBuilder("node1").build());
  for (int i = 0; i < 10; ++i) store.upsert(PodBuilder("p" + std::to_string(i)).node("node1").build());
  Recorded rec;
  std::atomic<int> events{0};
  trigger::Planner planner(
      store, fast(),
      [&](const framework::CycleScope& s, trigger::Planner::TimePoint) {
        std::lock_guard<std::mutex> lock(rec.mu);
        rec.runs.push_back(s);
      },
      [&](const std::string&) { ++events; });
  planner.start();
  for (int i = 0; i < 10; ++i) store.remove(api::Kind::Pod, "default/p" + std::to_string(i));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  planner.drain();
  planner.stop();
  EXPECT_EQ(events.load(), 10);
  std::lock_guard<std::mutex> lock(rec.mu);
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_FALSE(rec.runs[0].runDeschedule);
  EXPECT_TRUE(rec.runs[0].runBalance);
}

}  // namespace
}  // namespace kdesched::testing
