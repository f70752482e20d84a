// The events the six "status and taint" plugins act on: a node gaining a taint, a pod failing or
// restarting, a pod bound next to its duplicate.
#include <gtest/gtest.h>

#include "pkg/trigger/affected.h"
#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

struct Harness {
  cluster::Store store;
  trigger::Seeds seeds;
  trigger::Interest interest;
  std::vector<std::string> kinds;
  cluster::Store::Subscription subscription;
  explicit Harness(bool podStatus = true) {
    interest.podStatus = podStatus;
    subscription = store.subscribe([this](const cluster::StoreEvent& e) {
      std::string k = trigger::addSeed(e, seeds, interest);
      if (!k.empty()) kinds.push_back(k);
    });
    store.upsert(NodeBuilder("node1").build());
    store.upsert(NodeBuilder("node2").build());
    quiet();
  }
  void quiet() {
    seeds = {};
    kinds.clear();
  }
  trigger::Scope scope() { return trigger::affectedPods(*store.snapshot(), seeds); }
};

std::set<std::string> statusPlugins() { return {trigger::kStatusPlugins.begin(), trigger::kStatusPlugins.end()}; }

TEST(StatusSeeds, ANodeGainingATaintSelectsItsLivePods) {
  Harness h;
  h.store.upsert(PodBuilder("a").node("node1").build());
  h.store.upsert(PodBuilder("b").node("node1").build());
  h.store.upsert(PodBuilder("done").node("node1").phase(api::PodPhase::Succeeded).build());
  h.store.upsert(PodBuilder("elsewhere").node("node2").build());
  h.quiet();
  h.store.upsert(NodeBuilder("node1").taint("dedicated", "gpu", api::TaintEffect::NoSchedule).build());
  EXPECT_EQ(h.kinds, std::vector<std::string>{"node-changed"});
  auto s = h.scope();
  EXPECT_EQ(sortedKeys(s.pods), (std::vector<std::string>{"default/a", "default/b"}));
  EXPECT_EQ(s.plugins, std::set<std::string>{trigger::kNodeTaintsPlugin});
}

TEST(StatusSeeds, ALabelChangeOrARemovedTaintIsNoTaintRun) {
  Harness h;
  h.store.upsert(NodeBuilder("node1").taint("dedicated", "gpu", api::TaintEffect::NoSchedule).build());
  h.store.upsert(PodBuilder("a").node("node1").build());
  h.quiet();
  h.store.upsert(NodeBuilder("node1").label("x", "y").taint("dedicated", "gpu", api::TaintEffect::NoSchedule).build());
  EXPECT_FALSE(h.scope().plugins.count(trigger::kNodeTaintsPlugin));
  h.quiet();
  h.store.upsert(NodeBuilder("node1").label("x", "y").build());  // taint removed: nothing to break
  EXPECT_EQ(h.kinds, std::vector<std::string>{"node-changed"});
  EXPECT_FALSE(h.scope().plugins.count(trigger::kNodeTaintsPlugin));
}

TEST(StatusSeeds, APodTurningFailedIsLookedAtByTheStatusPlugins) {
  Harness h;
  h.store.upsert(PodBuilder("job").node("node1").build());
  h.quiet();
  h.store.upsert(PodBuilder("job").node("node1").phase(api::PodPhase::Failed).terminatedReason("Error", 2).build());
  EXPECT_EQ(h.kinds, std::vector<std::string>{"pod-failed"});
  auto s = h.scope();
  EXPECT_EQ(sortedKeys(s.pods), std::vector<std::string>{"default/job"});
  EXPECT_EQ(s.plugins, statusPlugins());
}

TEST(StatusSeeds, ARestartAndANewWaitingReasonAreEvents) {
  Harness h;
  h.store.upsert(PodBuilder("web").node("node1").restarts(2).build());
  h.quiet();
  h.store.upsert(PodBuilder("web").node("node1").restarts(3).build());
  h.store.upsert(PodBuilder("web").node("node1").restarts(3).waitingReason("CrashLoopBackOff").build());
  h.store.upsert(PodBuilder("web").node("node1").restarts(3).waitingReason("CrashLoopBackOff").build());
  EXPECT_EQ(h.kinds, (std::vector<std::string>{"pod-restarted", "pod-status"}));
  EXPECT_EQ(sortedKeys(h.scope().pods), std::vector<std::string>{"default/web"});
}

TEST(StatusSeeds, WithoutAStatusPluginStatusChangesAreNotEvents) {
  Harness h(false);
  h.store.upsert(PodBuilder("job").node("node1").build());
  h.quiet();
  h.store.upsert(PodBuilder("job").node("node1").restarts(5).build());
  h.store.upsert(PodBuilder("job").node("node1").restarts(5).phase(api::PodPhase::Failed).build());
  EXPECT_TRUE(h.kinds.empty());
  EXPECT_TRUE(h.seeds.empty());
}

TEST(StatusSeeds, TerminatingOrUnboundPodsAreNotStatusSeeds) {
  Harness h;
  h.store.upsert(PodBuilder("pending").build());
  h.store.upsert(PodBuilder("leaving").node("node1").build());
  h.quiet();
  h.store.upsert(PodBuilder("pending").restarts(4).build());
  h.store.upsert(PodBuilder("leaving").node("node1").terminating().restarts(4).build());
  EXPECT_EQ(h.kinds, std::vector<std::string>{"pod-terminating"});
  EXPECT_TRUE(h.scope().pods.empty());
}

TEST(StatusSeeds, APodBoundBesideASiblingAsksForABalanceRun) {
  Harness h;
  h.store.upsert(PodBuilder("web-1").ownerUid("ReplicaSet", "web", "rs1").node("node1").build());
  h.store.upsert(PodBuilder("web-2").ownerUid("ReplicaSet", "web", "rs1").build());
  h.store.upsert(PodBuilder("web-3").ownerUid("ReplicaSet", "web", "rs1").build());
  h.quiet();
  h.store.upsert(PodBuilder("web-2").ownerUid("ReplicaSet", "web", "rs1").node("node2").build());
  EXPECT_FALSE(h.scope().balance);  // alone on node2
  h.quiet();
  h.store.upsert(PodBuilder("web-3").ownerUid("ReplicaSet", "web", "rs1").node("node1").build());
  EXPECT_EQ(h.kinds, std::vector<std::string>{"pod-bound"});
  EXPECT_TRUE(h.scope().balance);  // next to web-1
}

}  // namespace
}  // namespace kdesched::testing
