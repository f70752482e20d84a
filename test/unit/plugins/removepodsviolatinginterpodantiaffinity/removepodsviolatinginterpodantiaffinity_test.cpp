#include "pkg/plugins/removepodsviolatinginterpodantiaffinity/removepodsviolatinginterpodantiaffinity.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;

const char* kPlugin = "RemovePodsViolatingInterPodAntiAffinity";

struct Case {
  std::string name;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs;
  std::string topLevel;     // policy limits
  std::string evictorArgs;  // DefaultEvictor args
  std::string pluginArgs;
  std::vector<std::string> wantEvicted;
  std::vector<std::string> wantRefused = {};
  std::vector<std::shared_ptr<const api::Namespace>> namespaces = {};
};

std::vector<NodePtr> threeNodes() {
  return {NodeBuilder("node1").zone("a").build(), NodeBuilder("node2").zone("a").build(),
          NodeBuilder("node3").zone("b").build()};
}

PodPtr payment(std::string node = "node2") {
  return PodBuilder("payment").app("payment").node(node).antiAffinity("app", "order").build();
}
PodPtr order(std::string node = "node2", std::string name = "order") {
  return PodBuilder(name).app("order").node(node).build();
}

class AntiAffinityTest : public ::testing::TestWithParam<Case> {};

TEST_P(AntiAffinityTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  for (auto& n : c.nodes) b.add(n);
  for (auto& p : c.pods) b.add(p);
  for (auto& p : c.pdbs) b.add(p);
  for (auto& n : c.namespaces) b.add(n);
  auto out = runPolicy(policyWith(kPlugin, "deschedule", c.pluginArgs, c.evictorArgs, c.topLevel), *b.snapshot());
  EXPECT_EQ(out.evicted, c.wantEvicted);
  EXPECT_EQ(out.refused, c.wantRefused);
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  cs.push_back(
      {"order beside payment evicts payment", threeNodes(), {order(), payment()}, {}, "", "", "", {"default/payment"}});
  cs.push_back({"different nodes: no violation", threeNodes(), {order("node1"), payment("node2")}, {}, "", "", "", {}});
  cs.push_back({"terminating order pod is not a violator",
                threeNodes(),
                {PodBuilder("order").app("order").node("node2").terminating().build(), payment()},
                {},
                "",
                "",
                "",
                {}});
  cs.push_back({"zone topology: order in same zone on another node",
                threeNodes(),
                {order("node1"), PodBuilder("payment")
                                     .app("payment")
                                     .node("node2")
                                     .antiAffinity("app", "order", "topology.kubernetes.io/zone")
                                     .build()},
                {},
                "",
                "",
                "",
                {"default/payment"}});
  cs.push_back({"zone topology: order in another zone",
                threeNodes(),
                {order("node3"), PodBuilder("payment")
                                     .app("payment")
                                     .node("node2")
                                     .antiAffinity("app", "order", "topology.kubernetes.io/zone")
                                     .build()},
                {},
                "",
                "",
                "",
                {}});
  cs.push_back({"order in another namespace does not match a term without namespaces",
                threeNodes(),
                {PodBuilder("order", "shop").app("order").node("node2").build(), payment()},
                {},
                "",
                "",
                "",
                {}});
  cs.push_back({"term namespaces list selects the other namespace",
                threeNodes(),
                {PodBuilder("order", "shop").app("order").node("node2").build(),
                 PodBuilder("payment")
                     .app("payment")
                     .node("node2")
                     .antiAffinity("app", "order", "kubernetes.io/hostname", {"shop"})
                     .build()},
                {},
                "",
                "",
                "",
                {"default/payment"}});
  {
    // Two violators on node2: the per-node limit of 1 evicts the lower-priority one only.
    auto p1 = PodBuilder("payment-a").app("payment").node("node2").priority(100).antiAffinity("app", "order").build();
    auto p2 = PodBuilder("payment-b").app("payment").node("node2").priority(10).antiAffinity("app", "order").build();
    cs.push_back({"per-node limit, lowest priority first",
                  threeNodes(),
                  {order(), p1, p2},
                  {},
                  "maxNoOfPodsToEvictPerNode: 1\n",
                  "",
                  "",
                  {"default/payment-b"},
                  {"default/payment-a by maxNoOfPodsToEvictPerNode"}});
  }
  {
    auto p1 = PodBuilder("payment-a").app("payment").node("node2").antiAffinity("app", "order").build();
    auto p2 = PodBuilder("payment-b").app("payment").node("node3").antiAffinity("app", "order").build();
    cs.push_back({"total limit stops the plugin",
                  threeNodes(),
                  {order("node2"), order("node3", "order-b"), p1, p2},
                  {},
                  "maxNoOfPodsToEvictTotal: 1\n",
                  "",
                  "",
                  {"default/payment-a"},
                  {"default/payment-b by maxNoOfPodsToEvictTotal"}});
    cs.push_back({"namespace limit",
                  threeNodes(),
                  {order("node2"), order("node3", "order-b"), p1, p2},
                  {},
                  "maxNoOfPodsToEvictPerNamespace: 1\n",
                  "",
                  "",
                  {"default/payment-a"},
                  {"default/payment-b by maxNoOfPodsToEvictPerNamespace"}});
    cs.push_back({"limit 0 evicts nothing (upstream: a set limit of 0 allows none)",
                  threeNodes(),
                  {order("node2"), p1},
                  {},
                  "maxNoOfPodsToEvictTotal: 0\n",
                  "",
                  "",
                  {},
                  {"default/payment-a by maxNoOfPodsToEvictTotal"}});
  }
  cs.push_back({"PDB without budget refuses",
                threeNodes(),
                {order(), payment()},
                {pdb("payment", "default", selectorOf("app", "payment"), 0)},
                "",
                "",
                "",
                {},
                {"default/payment by PodDisruptionBudget default/payment"}});
  cs.push_back({"PDB with budget allows",
                threeNodes(),
                {order(), payment()},
                {pdb("payment", "default", selectorOf("app", "payment"), 1)},
                "",
                "",
                "",
                {"default/payment"}});
  {
    // nodeFit: every other node is tainted, so payment has nowhere to go.
    std::vector<NodePtr> nodes = {NodeBuilder("node1").taint("dedicated", "x", api::TaintEffect::NoSchedule).build(),
                                  NodeBuilder("node2").build(), NodeBuilder("node3").unschedulable().build()};
    cs.push_back({"nodeFit on: unschedulable and tainted targets refuse",
                  nodes,
                  {order(), payment()},
                  {},
                  "",
                  "      nodeFit: true\n",
                  "",
                  {},
                  {"default/payment by DefaultEvictor"}});
    cs.push_back({"nodeFit off: evicts anyway", nodes, {order(), payment()}, {}, "", "", "", {"default/payment"}});
  }
  cs.push_back(
      {"critical payment is protected",
       threeNodes(),
       {order(),
        PodBuilder("payment").app("payment").node("node2").priority(2000000000).antiAffinity("app", "order").build()},
       {},
       "",
       "",
       "",
       {},
       {"default/payment by DefaultEvictor"}});
  cs.push_back({"plugin labelSelector excluding order hides the violation (upstream lists only selected pods)",
                threeNodes(),
                {order(), payment()},
                {},
                "",
                "",
                "      labelSelector:\n        matchLabels:\n          app: payment\n",
                {}});
  cs.push_back({"plugin namespaces exclude",
                threeNodes(),
                {order(), payment()},
                {},
                "",
                "",
                "      namespaces:\n        exclude: [default]\n",
                {}});
  {
    // Mutual anti-affinity: once the first is evicted, the second no longer violates.
    auto a = PodBuilder("a").app("a").node("node2").priority(1).antiAffinity("app", "b").build();
    auto b2 = PodBuilder("b").app("b").node("node2").priority(2).antiAffinity("app", "a").build();
    cs.push_back({"mutual anti-affinity evicts only one", threeNodes(), {a, b2}, {}, "", "", "", {"default/a"}});
  }
  {
    api::PodAffinityTerm t;
    t.labelSelector = selectorOf("app", "order");
    t.topologyKey = "kubernetes.io/hostname";
    t.namespaceSelector = api::LabelSelector{{{"team", "shop"}}, {}};
    auto ns = std::make_shared<const api::Namespace>(api::Namespace{"shop", api::Labels{{"team", "shop"}}, false});
    auto p = PodBuilder("payment").app("payment").node("node2").antiAffinityTerm(t).build();
    cs.push_back({"namespaceSelector is honoured as kube-scheduler does",
                  threeNodes(),
                  {PodBuilder("order", "shop").app("order").node("node2").build(), p},
                  {},
                  "",
                  "",
                  "",
                  {"default/payment"},
                  {},
                  {ns}});
    auto other = std::make_shared<const api::Namespace>(api::Namespace{"shop", api::Labels{{"team", "other"}}, false});
    cs.push_back({"namespaceSelector not matching the namespace",
                  threeNodes(),
                  {PodBuilder("order", "shop").app("order").node("node2").build(), p},
                  {},
                  "",
                  "",
                  "",
                  {},
                  {},
                  {other}});
  }
  return cs;
}

INSTANTIATE_TEST_SUITE_P(Table, AntiAffinityTest, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(AntiAffinity, ReasonNamesTermAndConflictingPod) {
  ClusterBuilder b;
  for (auto& n : threeNodes()) b.add(n);
  b.add(order()).add(payment());
  auto out = runPolicy(policyWith(kPlugin, "deschedule"), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(out.reasons[0],
            "required podAntiAffinity term {labelSelector: app=order, topologyKey: kubernetes.io/hostname} is "
            "violated by pod default/order on node node2");
}

}  // namespace
}  // namespace kdesched::testing
