#include "pkg/moves/tracker.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/fake_eviction_api.h"

namespace kdesched::testing {
namespace {

struct Fixture {
  Fixture() : tracker(clock, &events, [this](const moves::MoveOutcome& o) { outcomes.push_back(o); }) {
    old = PodBuilder("payment-abc-1")
              .label("pod-template-hash", "abc")
              .owner("ReplicaSet", "payment-abc")
              .node("n1")
              .build();
    evictor::Decision d{old.get(), "n1", kAnti, "default", "breaks anti-affinity with order"};
    d.landing.estimated = true;
    d.landing.fits = {"n2"};
    d.landing.fitCount = 1;
    d.move = evictor::MovePlan{.ns = "default",
                               .deployment = "payment",
                               .uid = "dep-uid",
                               .resourceVersion = "10",
                               .generation = 4,
                               .rollout = "rollout restart",
                               .deadlineSeconds = 60};
    tracker.evict(d);
  }
  static constexpr const char* kAnti = "RemovePodsViolatingInterPodAntiAffinity";
  cluster::PodPtr replacement(bool ready, std::string node = "n2", std::string hash = "def") {
    PodBuilder b("payment-" + hash + "-1");
    b.label("pod-template-hash", hash).owner("ReplicaSet", "payment-" + hash);
    if (!node.empty()) b.node(node);
    if (!ready) b.notReady();
    return b.build();
  }
  void added(cluster::PodPtr p) { tracker.podChanged({cluster::EventType::Added, nullptr, p}); }
  void modified(cluster::PodPtr p) { tracker.podChanged({cluster::EventType::Modified, nullptr, p}); }
  void deleted(cluster::PodPtr p) { tracker.podChanged({cluster::EventType::Deleted, p, nullptr}); }

  FakeClock clock;
  FakeEvictionApi events;
  std::vector<moves::MoveOutcome> outcomes;
  moves::MoveTracker tracker;
  cluster::PodPtr old;
};

TEST(MoveTracker, SucceedsWhenTheNewPodIsReadyAndTheOldOneGone) {
  Fixture f;
  EXPECT_EQ(f.tracker.inFlight(), 1u);
  ASSERT_EQ(f.events.events.size(), 1u);
  EXPECT_EQ(f.events.events[0].reason, "MoveStarted");
  EXPECT_EQ(f.events.events[0].regardingKind, "Deployment");
  f.added(f.replacement(false, ""));
  f.clock.advanceSeconds(2);
  f.modified(f.replacement(false));
  f.clock.advanceSeconds(3);
  f.modified(f.replacement(true));
  EXPECT_TRUE(f.outcomes.empty());  // the old pod is still there
  f.clock.advanceSeconds(1);
  f.deleted(f.old);
  ASSERT_EQ(f.outcomes.size(), 1u);
  const moves::MoveOutcome& o = f.outcomes[0];
  EXPECT_TRUE(o.succeeded);
  EXPECT_EQ(o.newPod, "payment-def-1");
  EXPECT_EQ(o.newNode, "n2");
  EXPECT_EQ(o.expectedNode, "n2");
  EXPECT_DOUBLE_EQ(o.readySeconds, 5);
  EXPECT_DOUBLE_EQ(o.seconds, 6);
  EXPECT_EQ(f.tracker.inFlight(), 0u);
  EXPECT_EQ(f.events.events.back().reason, "MoveSucceeded");
  EXPECT_EQ(f.tracker.busy("default", "payment", 5), std::nullopt);
}

// Pods of the old ReplicaSet, or of another Deployment whose name starts the same, are not the
// replacement.
TEST(MoveTracker, OnlyThePodOfANewReplicaSetOfTheDeploymentCounts) {
  Fixture f;
  f.modified(f.replacement(true, "n1", "abc"));  // the old ReplicaSet
  auto other = PodBuilder("payment-x-def-1")
                   .label("pod-template-hash", "def")
                   .owner("ReplicaSet", "payment-x-def")
                   .node("n2")
                   .build();
  f.added(other);
  f.deleted(f.old);
  EXPECT_TRUE(f.outcomes.empty());
  f.modified(f.replacement(true));
  ASSERT_EQ(f.outcomes.size(), 1u);
  EXPECT_EQ(f.outcomes[0].newPod, "payment-def-1");
}

TEST(MoveTracker, FailsAtTheDeadlineAndIsNotRetriedUntilTheSpecChanges) {
  Fixture f;
  f.added(f.replacement(false));
  f.clock.advanceSeconds(59);
  f.tracker.tick();
  EXPECT_TRUE(f.outcomes.empty());
  EXPECT_NE(f.tracker.busy("default", "payment", 5).value_or("").find("in flight"), std::string::npos);
  f.clock.advanceSeconds(1);
  f.tracker.tick();
  ASSERT_EQ(f.outcomes.size(), 1u);
  EXPECT_FALSE(f.outcomes[0].succeeded);
  EXPECT_EQ(f.outcomes[0].detail, "the new pod payment-def-1 was not Ready 60s after the restart (the deadline)");
  EXPECT_EQ(f.outcomes[0].readySeconds, -1);
  EXPECT_EQ(f.events.events.back().reason, "MoveFailed");
  EXPECT_EQ(f.events.events.back().type, "Warning");
  // Generation 5 is our restart's: still the failed spec, however long after.
  f.clock.advanceSeconds(24 * 3600);
  EXPECT_NE(f.tracker.busy("default", "payment", 5).value_or("").find("not retried until its spec changes"),
            std::string::npos);
  EXPECT_EQ(f.tracker.busy("default", "payment", 6), std::nullopt);  // someone changed it
  // A late Ready for the failed move changes nothing.
  f.modified(f.replacement(true));
  EXPECT_EQ(f.outcomes.size(), 1u);
}

// The restart's answer can come after the new pod is Ready and the old one gone: what the cache
// already shows counts.
TEST(MoveTracker, CatchesUpWithWhatHappenedBeforeItFollowed) {
  FakeClock clock;
  std::vector<moves::MoveOutcome> outcomes;
  ClusterBuilder b;
  b.add(NodeBuilder("n2").build());
  b.add(PodBuilder("payment-def-1")
            .label("pod-template-hash", "def")
            .owner("ReplicaSet", "payment-def")
            .node("n2")
            .build());
  moves::MoveTracker tracker(
      clock, nullptr, [&](const moves::MoveOutcome& o) { outcomes.push_back(o); }, [&] { return b.snapshot(); });
  auto old = PodBuilder("payment-abc-1")
                 .label("pod-template-hash", "abc")
                 .owner("ReplicaSet", "payment-abc")
                 .node("n1")
                 .build();
  evictor::Decision d{old.get(), "n1", "x", "default", "r"};
  d.move = evictor::MovePlan{.ns = "default",
                             .deployment = "payment",
                             .uid = "u",
                             .resourceVersion = "1",
                             .generation = 1,
                             .rollout = "r",
                             .deadlineSeconds = 60};
  tracker.evict(d);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].succeeded);
  EXPECT_EQ(outcomes[0].newPod, "payment-def-1");
  EXPECT_EQ(tracker.inFlight(), 0u);
}

TEST(MoveTracker, EvictionsAreNotFollowed) {
  Fixture f;
  evictor::Decision d{f.old.get(), "n1", "x", "default", "r"};
  f.tracker.evict(d);
  EXPECT_EQ(f.tracker.inFlight(), 1u);
}

}  // namespace
}  // namespace kdesched::testing
