#include "pkg/trigger/affected.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

using trigger::Seeds;

// Feeds one change through addSeed, then maps against the store's snapshot.
struct Harness {
  cluster::Store store;
  Seeds seeds;
  std::vector<std::string> kinds;
  cluster::Store::Subscription subscription;
  Harness() {
    subscription = store.subscribe([this](const cluster::StoreEvent& e) {
      std::string k = trigger::addSeed(e, seeds);
      if (!k.empty()) kinds.push_back(k);
    });
  }
  void quiet() {
    seeds = {};
    kinds.clear();
  }
  trigger::Scope scope() { return trigger::affectedPods(*store.snapshot(), seeds); }
};

void threeNodes(cluster::Store& s) {
  s.upsert(NodeBuilder("node1").zone("a").build());
  s.upsert(NodeBuilder("node2").zone("a").build());
  s.upsert(NodeBuilder("node3").zone("b").build());
}

TEST(Affected, OrderBoundBesidePaymentSelectsPayment) {
  Harness h;
  threeNodes(h.store);
  h.store.upsert(PodBuilder("payment").app("payment").node("node2").antiAffinity("app", "order").build());
  h.store.upsert(PodBuilder("other").app("other").node("node2").build());
  h.quiet();
  h.store.upsert(PodBuilder("order").app("order").build());  // pending: nothing yet
  EXPECT_TRUE(h.seeds.empty());
  h.store.upsert(PodBuilder("order").app("order").node("node2").build());  // bound
  EXPECT_EQ(h.kinds, std::vector<std::string>{"pod-bound"});
  auto s = h.scope();
  EXPECT_EQ(sortedKeys(s.pods), std::vector<std::string>{"default/payment"});
  EXPECT_EQ(s.plugins, std::set<std::string>{trigger::kAntiAffinityPlugin});
  EXPECT_FALSE(s.balance);
}

TEST(Affected, BoundOnAnotherHostnameDomainSelectsNothing) {
  Harness h;
  threeNodes(h.store);
  h.store.upsert(PodBuilder("payment").app("payment").node("node2").antiAffinity("app", "order").build());
  h.quiet();
  h.store.upsert(PodBuilder("order").app("order").node("node1").build());
  EXPECT_TRUE(h.scope().pods.empty());
}

TEST(Affected, ZoneTermSelectsCarriersAcrossTheZone) {
  Harness h;
  threeNodes(h.store);
  h.store.upsert(PodBuilder("p1")
                     .app("payment")
                     .node("node2")
                     .antiAffinity("app", "order", "topology.kubernetes.io/zone")
                     .build());
  h.store.upsert(PodBuilder("p3")
                     .app("payment")
                     .node("node3")
                     .antiAffinity("app", "order", "topology.kubernetes.io/zone")
                     .build());
  h.quiet();
  h.store.upsert(PodBuilder("order").app("order").node("node1").build());  // zone a: p1's domain, not p3's
  EXPECT_EQ(sortedKeys(h.scope().pods), std::vector<std::string>{"default/p1"});
}

TEST(Affected, TheBoundPodItselfWhenItCarriesTerms) {
  Harness h;
  threeNodes(h.store);
  h.store.upsert(PodBuilder("order").app("order").node("node2").build());
  h.quiet();
  h.store.upsert(PodBuilder("payment").app("payment").node("node2").antiAffinity("app", "order").build());
  EXPECT_EQ(sortedKeys(h.scope().pods), std::vector<std::string>{"default/payment"});
}

TEST(Affected, RelabelThatStartsAViolation) {
  Harness h;
  threeNodes(h.store);
  h.store.upsert(PodBuilder("payment").app("payment").node("node2").antiAffinity("app", "order").build());
  h.store.upsert(PodBuilder("x").app("cart").node("node2").build());
  h.quiet();
  h.store.upsert(PodBuilder("x").app("order").node("node2").build());
  EXPECT_EQ(h.kinds, std::vector<std::string>{"pod-relabelled"});
  EXPECT_EQ(sortedKeys(h.scope().pods), std::vector<std::string>{"default/payment"});
}

TEST(Affected, RelabelThatStopsAViolationSelectsNothing) {
  Harness h;
  threeNodes(h.store);
  h.store.upsert(PodBuilder("payment").app("payment").node("node2").antiAffinity("app", "order").build());
  h.store.upsert(PodBuilder("x").app("order").node("node2").build());
  h.quiet();
  h.store.upsert(PodBuilder("x").app("cart").node("node2").build());
  EXPECT_EQ(h.kinds, std::vector<std::string>{"pod-relabelled"});
  EXPECT_TRUE(h.scope().pods.empty());
}

TEST(Affected, StatusOnlyUpdatesAreNotEvents) {
  Harness h;
  threeNodes(h.store);
  h.store.upsert(PodBuilder("x").app("order").node("node2").build());
  h.quiet();
  h.store.upsert(PodBuilder("x").app("order").node("node2").notReady().build());
  EXPECT_TRUE(h.kinds.empty());
  EXPECT_TRUE(h.seeds.empty());
}

TEST(Affected, TerminatingPodsAreNotViolators) {
  Harness h;
  threeNodes(h.store);
  h.store.upsert(PodBuilder("payment").app("payment").node("node2").antiAffinity("app", "order").build());
  h.store.upsert(PodBuilder("order").app("order").node("node1").build());
  h.quiet();
  h.store.upsert(PodBuilder("order").app("order").node("node1").terminating().build());
  EXPECT_EQ(h.kinds, std::vector<std::string>{"pod-terminating"});
  auto s = h.scope();
  EXPECT_TRUE(s.pods.empty());
  EXPECT_TRUE(s.balance);
}

TEST(Affected, NodeRelabelSelectsItsPodsWithAffinity) {
  Harness h;
  h.store.upsert(NodeBuilder("node1").label("disk", "ssd").build());
  h.store.upsert(NodeBuilder("node2").build());
  h.store.upsert(
      PodBuilder("needs-ssd").node("node1").requiredNodeAffinity("disk", api::NodeSelectorOp::In, {"ssd"}).build());
  h.store.upsert(PodBuilder("plain").node("node1").build());
  h.store.upsert(
      PodBuilder("elsewhere").node("node2").requiredNodeAffinity("disk", api::NodeSelectorOp::In, {"ssd"}).build());
  h.quiet();
  h.store.upsert(NodeBuilder("node1").build());  // lost disk=ssd
  EXPECT_EQ(h.kinds, std::vector<std::string>{"node-changed"});
  auto s = h.scope();
  EXPECT_EQ(sortedKeys(s.pods), std::vector<std::string>{"default/needs-ssd"});
  EXPECT_EQ(s.plugins, std::set<std::string>{trigger::kNodeAffinityPlugin});
  EXPECT_TRUE(s.balance);
}

TEST(Affected, NodeTaintAndCordonAreChanges) {
  Harness h;
  h.store.upsert(NodeBuilder("node1").build());
  h.quiet();
  h.store.upsert(NodeBuilder("node1").taint("k", "v", api::TaintEffect::NoSchedule).build());
  h.store.upsert(NodeBuilder("node1").taint("k", "v", api::TaintEffect::NoSchedule).unschedulable().build());
  EXPECT_EQ(h.kinds, (std::vector<std::string>{"node-changed", "node-changed"}));
}

TEST(Affected, DeletionsAndNewNodesOnlyBalance) {
  Harness h;
  h.store.upsert(NodeBuilder("node1").build());
  h.store.upsert(PodBuilder("a").node("node1").build());
  h.quiet();
  h.store.remove(api::Kind::Pod, "default/a");
  h.store.upsert(NodeBuilder("node2").build());
  EXPECT_EQ(h.kinds, (std::vector<std::string>{"pod-deleted", "node-added"}));
  auto s = h.scope();
  EXPECT_TRUE(s.pods.empty());
  EXPECT_TRUE(s.balance);
}

TEST(Affected, SpreadConstraintSelectingTheBoundPodSchedulesBalance) {
  Harness h;
  threeNodes(h.store);
  api::TopologySpreadConstraint c;
  c.topologyKey = "topology.kubernetes.io/zone";
  c.labelSelector = selectorOf("app", "web");
  h.store.upsert(PodBuilder("web-1").app("web").node("node1").spread(c).build());
  h.quiet();
  h.store.upsert(PodBuilder("web-2").app("web").node("node2").spread(c).build());
  auto s = h.scope();
  EXPECT_TRUE(s.balance);
  EXPECT_TRUE(s.pods.empty());
}

}  // namespace
}  // namespace kdesched::testing
