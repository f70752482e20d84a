// LowNodeUtilization through the real engine and plan sink. The table ports the scenarios of
// upstream's TestLowNodeUtilization and TestLowNodeUtilizationWithTaints (request-based runs,
// DefaultEvictor nodeFit on as upstream's tests set it) and adds kdesched's limits and refusals.
#include "pkg/plugins/lownodeutilization/lownodeutilization.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;
using PdbPtr = std::shared_ptr<const api::PodDisruptionBudget>;

const char* kPlugin = "LowNodeUtilization";
const std::string kNodeFit = "      nodeFit: true\n";
// Upstream's most used args: cpu and pods, 30% → 50%.
const std::string kCpuPods3050 =
    "      thresholds: {cpu: 30, pods: 30}\n"
    "      targetThresholds: {cpu: 50, pods: 50}\n";

struct Case {
  std::string name;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::string pluginArgs;
  std::string evictorArgs = kNodeFit;
  std::string topLevel = "";
  std::vector<PdbPtr> pdbs = {};
  std::vector<std::string> wantEvicted = {};
  std::vector<std::string> wantRefused = {};
};

// Upstream's test.BuildTestNode(name, milliCPU, memoryBytes, pods).
NodePtr node(const std::string& name, std::int64_t cpu, std::int64_t mem, std::int64_t pods) {
  return NodeBuilder(name).allocatable(cpu, mem, pods).build();
}
NodePtr unschedulableNode(const std::string& name, std::int64_t cpu, std::int64_t mem, std::int64_t pods) {
  return NodeBuilder(name).allocatable(cpu, mem, pods).unschedulable().build();
}
// Upstream's test.BuildTestPod(name, milliCPU, memoryBytes, node) with a ReplicaSet owner.
PodBuilder pod(const std::string& name, std::int64_t cpu, std::int64_t mem, const std::string& on) {
  PodBuilder b(name);
  b.node(on).requests(cpu, mem).app(name);
  return b;
}

std::vector<NodePtr> threeNodes() {
  return {node("n1", 4000, 3000, 9), node("n2", 4000, 3000, 10), unschedulableNode("n3", 4000, 3000, 10)};
}

// Pods DefaultEvictor never lets go: a DaemonSet pod, a mirror pod with local storage, a
// system-critical pod.
std::vector<PodPtr> protectedPods(const std::string& on, std::int64_t cpu, const std::string& prefix = "p") {
  return {
      pod(prefix + "6", cpu, 0, on).owner("DaemonSet", "ds").build(),
      pod(prefix + "7", cpu, 0, on).localStorage().mirror().build(),
      PodBuilder(prefix + "8", "kube-system").node(on).requests(cpu, 0).priority(api::kSystemCriticalPriority).build()};
}

// upstream "without priorities": n1 80% cpu / 8 of 9 pods, n2 10%/10%, n3 unschedulable.
std::vector<PodPtr> basicPods() {
  std::vector<PodPtr> pods;
  for (int i = 1; i <= 5; ++i) pods.push_back(pod("p" + std::to_string(i), 400, 0, "n1").build());
  for (auto& p : protectedPods("n1", 400)) pods.push_back(p);
  pods.push_back(pod("p9", 400, 0, "n2").build());
  return pods;
}

std::vector<std::string> evicted(std::initializer_list<const char*> names, const std::string& ns = "default") {
  std::vector<std::string> out;
  for (const char* n : names) out.push_back(ns + "/" + n);
  return out;
}

class LowNodeUtilizationTest : public ::testing::TestWithParam<Case> {};

TEST_P(LowNodeUtilizationTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  for (auto& n : c.nodes) b.add(n);
  for (auto& p : c.pods) b.add(p);
  for (auto& p : c.pdbs) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "balance", c.pluginArgs, c.evictorArgs, c.topLevel), *b.snapshot());
  EXPECT_EQ(out.evicted, c.wantEvicted);
  EXPECT_EQ(out.refused, c.wantRefused);
  for (const auto& r : out.cycle.runs) EXPECT_TRUE(r.status.isOk()) << r.plugin << ": " << r.status.message();
}

std::vector<Case> cases() {
  std::vector<Case> cs;

  {
    std::vector<PodPtr> pods = {
        pod("p1", 400, 0, "n1").owner("DaemonSet", "ds").build(),
        pod("p2", 400, 0, "n1").owner("DaemonSet", "ds").build(),
        pod("p3", 400, 0, "n1").owner("DaemonSet", "ds").build(),
        pod("p4", 400, 0, "n1").owner("DaemonSet", "ds").build(),
        pod("p5", 400, 0, "n1").localStorage().mirror().build(),
        PodBuilder("p6", "kube-system").node("n1").requests(400, 0).priority(api::kSystemCriticalPriority).build(),
        pod("p9", 400, 0, "n2").build()};
    cs.push_back({"no evictable pods", threeNodes(), pods, kCpuPods3050});
  }
  // n2 takes cpu up to 50% (1600m free) and pods up to 5 (4 free): four 400m pods fill both.
  cs.push_back({"without priorities: stops when the underutilized nodes are full",
                threeNodes(),
                basicPods(),
                kCpuPods3050,
                kNodeFit,
                "",
                {},
                evicted({"p1", "p2", "p3", "p4"})});
  // The same with a resource no node has (an empty name, as upstream loads it, or an extended one):
  // no room for it on n2, so nothing moves (upstream v0.36 evicts nothing either).
  for (const char* missing : {"\"\"", "example.com/none"})
    cs.push_back({std::string("a threshold on a resource no node has: ") + missing, threeNodes(), basicPods(),
                  std::string("      thresholds: {cpu: 30, pods: 30, ") + missing + ": 30}\n" +
                      "      targetThresholds: {cpu: 50, pods: 50, " + missing + ": 50}\n"});
  {
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 5; ++i)
      pods.push_back(PodBuilder("p" + std::to_string(i), "namespace1").node("n1").requests(400, 0).build());
    for (auto& p : protectedPods("n1", 400)) pods.push_back(p);
    pods.push_back(pod("p9", 400, 0, "n2").build());
    cs.push_back({"evictableNamespaces.exclude: excluded pods count toward usage but stay", threeNodes(), pods,
                  kCpuPods3050 + "      evictableNamespaces:\n        exclude: [namespace1]\n"});
  }
  {
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 4; ++i) pods.push_back(pod("p" + std::to_string(i), 400, 0, "n1").priority(1000).build());
    pods.push_back(pod("p5", 400, 0, "n1").priority(10).build());
    for (auto& p : protectedPods("n1", 400)) pods.push_back(p);
    pods.push_back(pod("p9", 400, 0, "n2").build());
    cs.push_back({"with priorities: lowest priority first",
                  threeNodes(),
                  pods,
                  kCpuPods3050,
                  kNodeFit,
                  "",
                  {},
                  evicted({"p5", "p1", "p2", "p3"})});
  }
  {
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 5; ++i) {
      PodBuilder p = pod("p" + std::to_string(i), 400, 0, "n1");
      if (i != 3) p.qos(api::QosClass::BestEffort);
      pods.push_back(p.build());
    }
    for (auto& p : protectedPods("n1", 400)) pods.push_back(p);
    pods.push_back(pod("p9", 400, 0, "n2").build());
    cs.push_back({"without priorities: best-effort pods first",
                  threeNodes(),
                  pods,
                  kCpuPods3050,
                  kNodeFit,
                  "",
                  {},
                  evicted({"p1", "p2", "p4", "p5"})});
  }
  const std::string kExtended =
      "      thresholds: {pods: 30, example.com/foo: 30}\n"
      "      targetThresholds: {pods: 50, example.com/foo: 50}\n";
  {
    std::vector<NodePtr> nodes = {NodeBuilder("n1").allocatable(4000, 3000, 9).extended("example.com/foo", 8).build(),
                                  NodeBuilder("n2").allocatable(4000, 3000, 10).extended("example.com/foo", 8).build(),
                                  unschedulableNode("n3", 4000, 3000, 10)};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 6; ++i)
      pods.push_back(pod("p" + std::to_string(i), 0, 0, "n1").request("example.com/foo", 1000).build());
    pods.push_back(pod("p7", 0, 0, "n1").request("example.com/foo", 1000).localStorage().mirror().build());
    pods.push_back(PodBuilder("p8", "kube-system")
                       .node("n1")
                       .requests(0, 0)
                       .request("example.com/foo", 1000)
                       .priority(api::kSystemCriticalPriority)
                       .build());
    pods.push_back(pod("p9", 0, 0, "n2").request("example.com/foo", 1000).build());
    // pods would allow 4 more on n2, example.com/foo only 3 (50% of 8 is 4, one in use).
    cs.push_back({"extended resource: stops when its room is used up",
                  nodes,
                  pods,
                  kExtended,
                  kNodeFit,
                  "",
                  {},
                  evicted({"p1", "p2", "p3"})});
  }
  {
    std::vector<NodePtr> nodes = {NodeBuilder("n1").allocatable(4000, 3000, 9).extended("example.com/foo", 8).build(),
                                  node("n2", 4000, 3000, 10), unschedulableNode("n3", 4000, 3000, 10)};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 5; ++i)
      pods.push_back(pod("p" + std::to_string(i), 0, 0, "n1").request("example.com/foo", 1000).build());
    pods.push_back(pod("p9", 0, 0, "n2").build());
    // n1 is over (5 of 9 pods), n2 under, but n2 has no example.com/foo at all: its room for it
    // is 0, so nothing moves.
    cs.push_back({"extended resource missing on the underutilized node", nodes, pods, kExtended});
  }
  {
    std::vector<NodePtr> nodes = {NodeBuilder("n1").allocatable(4000, 3000, 10).extended("example.com/foo", 8).build(),
                                  NodeBuilder("n2").allocatable(4000, 3000, 10).extended("example.com/foo", 8).build(),
                                  unschedulableNode("n3", 4000, 3000, 10)};
    std::vector<PodPtr> pods = {pod("p1", 0, 0, "n1").request("example.com/foo", 1000).build(),
                                pod("p2", 0, 0, "n2").request("example.com/foo", 7000).build(),
                                pod("p3", 0, 0, "n2").build(), pod("p8", 0, 0, "n3").build(),
                                pod("p9", 0, 0, "n3").build()};
    // Means over the nodes that have each resource: pods 16.7%, foo 50% (n3 has none) →
    // low pods 11.7 / foo 40, high pods 21.7 / foo 60: n1 under, n2 over; n1 takes 1 more pod.
    cs.push_back({"extended resource with deviation thresholds",
                  nodes,
                  pods,
                  "      useDeviationThresholds: true\n"
                  "      thresholds: {pods: 5, example.com/foo: 10}\n"
                  "      targetThresholds: {pods: 5, example.com/foo: 10}\n",
                  kNodeFit,
                  "",
                  {},
                  evicted({"p2"})});
  }
  {
    std::vector<NodePtr> nodes = {node("n1", 4000, 3000, 9), unschedulableNode("n2", 4000, 3000, 10)};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 5; ++i) pods.push_back(pod("p" + std::to_string(i), 400, 0, "n1").build());
    for (auto& p : protectedPods("n1", 400)) pods.push_back(p);
    cs.push_back({"the only other node is unschedulable: never underutilized", nodes, pods, kCpuPods3050});
  }
  {
    std::vector<NodePtr> nodes = {node("n1", 4000, 3000, 9),
                                  NodeBuilder("n2").allocatable(4000, 3000, 10).label("datacenter", "east").build()};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 3; ++i) pods.push_back(pod("p" + std::to_string(i), 400, 0, "n1").build());
    pods.push_back(pod("p4", 400, 0, "n1").nodeSelector("datacenter", "west").build());
    pods.push_back(
        pod("p5", 400, 0, "n1").requiredNodeAffinity("datacenter", api::NodeSelectorOp::In, {"west"}).build());
    for (auto& p : protectedPods("n1", 400)) pods.push_back(p);
    pods.push_back(pod("p9", 0, 0, "n2").build());
    cs.push_back({"nodeFit on: pods whose selector or affinity excludes n2 are refused",
                  nodes,
                  pods,
                  kCpuPods3050,
                  kNodeFit,
                  "",
                  {},
                  evicted({"p1", "p2", "p3"}),
                  {"default/p4 by DefaultEvictor", "default/p5 by DefaultEvictor"}});
    cs.push_back({"nodeFit off: the same pods are evicted",
                  nodes,
                  pods,
                  kCpuPods3050,
                  "",
                  "",
                  {},
                  evicted({"p1", "p2", "p3", "p4"})});
  }
  {
    // cpu mean 30%, pods mean 33%: low 25/28, high 35/38 → n2 takes pods up to 3 (2 free).
    cs.push_back({"deviation thresholds",
                  threeNodes(),
                  basicPods(),
                  "      useDeviationThresholds: true\n"
                  "      thresholds: {cpu: 5, pods: 5}\n"
                  "      targetThresholds: {cpu: 5, pods: 5}\n",
                  kNodeFit,
                  "",
                  {},
                  evicted({"p1", "p2"})});
  }
  {
    std::vector<NodePtr> nodes = {node("n1", 4000, 3000, 10), node("n2", 4000, 3000, 10),
                                  unschedulableNode("n3", 4000, 3000, 10)};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 5; ++i) pods.push_back(pod("p" + std::to_string(i), 400, 375, "n1").build());
    pods.push_back(pod("p6", 400, 375, "n1").owner("DaemonSet", "ds").build());
    pods.push_back(pod("p7", 400, 375, "n1").localStorage().mirror().build());
    pods.push_back(
        PodBuilder("p8", "kube-system").node("n1").requests(400, 375).priority(api::kSystemCriticalPriority).build());
    pods.push_back(pod("p9", 400, 3000, "n2").build());
    // memory is not a threshold resource but still tracked: n2's memory is full, so there is no
    // room anywhere and the run stops before the first eviction.
    cs.push_back({"no room for an untracked-threshold resource (memory) stops the run", nodes, pods,
                  "      useDeviationThresholds: true\n"
                  "      thresholds: {cpu: 5, pods: 5}\n"
                  "      targetThresholds: {cpu: 5, pods: 5}\n"});
  }
  cs.push_back({"evictionLimits.node caps evictions per source node",
                threeNodes(),
                basicPods(),
                kCpuPods3050 + "      evictionLimits:\n        node: 2\n",
                kNodeFit,
                "",
                {},
                evicted({"p1", "p2"})});
  cs.push_back({"numberOfNodes: one underutilized node is not more than 1", threeNodes(), basicPods(),
                kCpuPods3050 + "      numberOfNodes: 1\n"});
  cs.push_back({"numberOfNodes 0 acts on one underutilized node",
                threeNodes(),
                basicPods(),
                kCpuPods3050 + "      numberOfNodes: 0\n",
                kNodeFit,
                "",
                {},
                evicted({"p1", "p2", "p3", "p4"})});
  cs.push_back({"policy per-node limit: refused pod ends the node",
                threeNodes(),
                basicPods(),
                kCpuPods3050,
                kNodeFit,
                "maxNoOfPodsToEvictPerNode: 1\n",
                {},
                evicted({"p1"}),
                {"default/p2 by maxNoOfPodsToEvictPerNode"}});
  cs.push_back({"policy total limit stops the plugin",
                threeNodes(),
                basicPods(),
                kCpuPods3050,
                kNodeFit,
                "maxNoOfPodsToEvictTotal: 2\n",
                {},
                evicted({"p1", "p2"}),
                {"default/p3 by maxNoOfPodsToEvictTotal"}});
  cs.push_back({"policy total limit 0 evicts nothing",
                threeNodes(),
                basicPods(),
                kCpuPods3050,
                kNodeFit,
                "maxNoOfPodsToEvictTotal: 0\n",
                {},
                {},
                {"default/p1 by maxNoOfPodsToEvictTotal"}});
  cs.push_back({"policy namespace limit refuses each further pod and goes on",
                threeNodes(),
                basicPods(),
                kCpuPods3050,
                kNodeFit,
                "maxNoOfPodsToEvictPerNamespace: 1\n",
                {},
                evicted({"p1"}),
                {"default/p2 by maxNoOfPodsToEvictPerNamespace", "default/p3 by maxNoOfPodsToEvictPerNamespace",
                 "default/p4 by maxNoOfPodsToEvictPerNamespace", "default/p5 by maxNoOfPodsToEvictPerNamespace"}});
  cs.push_back({"PDB refusal moves on to the next pod",
                threeNodes(),
                basicPods(),
                kCpuPods3050,
                kNodeFit,
                "",
                {pdb("p1", "default", selectorOf("app", "p1"), 0)},
                evicted({"p2", "p3", "p4", "p5"}),
                {"default/p1 by PodDisruptionBudget default/p1"}});
  {
    // Two overutilized nodes (70% and 80%), busiest first; a per-node limit of 1 takes one pod
    // from each and the refusal of the second moves on to the next node.
    std::vector<NodePtr> nodes = {node("a", 4000, 3000, 10), node("b", 4000, 3000, 10), node("c", 4000, 3000, 10)};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 7; ++i) pods.push_back(pod("a" + std::to_string(i), 400, 0, "a").build());
    for (int i = 1; i <= 8; ++i) pods.push_back(pod("b" + std::to_string(i), 400, 0, "b").build());
    cs.push_back({"node limit moves on to the next source node, busiest first",
                  nodes,
                  pods,
                  kCpuPods3050,
                  kNodeFit,
                  "maxNoOfPodsToEvictPerNode: 1\n",
                  {},
                  evicted({"b1", "a1"}),
                  {"default/b2 by maxNoOfPodsToEvictPerNode", "default/a2 by maxNoOfPodsToEvictPerNode"}});
  }

  // TestLowNodeUtilizationWithTaints: pods 20% → 70%.
  const std::string kPods2070 = "      thresholds: {pods: 20}\n      targetThresholds: {pods: 70}\n";
  auto taintPods = [](const std::string& dest, bool tolerating) {
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 7; ++i) pods.push_back(pod("pod_" + std::to_string(i) + "_n1", 200, 0, "n1").build());
    if (tolerating)
      pods.push_back(pod("tolerate_pod", 200, 0, "n1")
                         .toleration({"key", api::TolerationOp::Equal, "value", api::TaintEffect::None, {}})
                         .build());
    else
      pods.push_back(pod("pod_8_n1", 200, 0, "n1").build());
    pods.push_back(pod("pod_9_" + dest, 200, 0, dest).build());
    return pods;
  };
  NodePtr n1 = node("n1", 2000, 3000, 10);
  NodePtr n3Tainted =
      NodeBuilder("n3").allocatable(1000, 3000, 10).taint("key", "value", api::TaintEffect::NoSchedule).build();
  cs.push_back({"taints: none, one pod brings n1 to 70%",
                {n1, node("n2", 1000, 3000, 10), node("n3", 1000, 3000, 10)},
                taintPods("n2", false),
                kPods2070,
                kNodeFit,
                "",
                {},
                evicted({"pod_1_n1"})});
  cs.push_back(
      {"taints: no pod tolerates the underutilized node's taint", {n1, n3Tainted}, taintPods("n3", false), kPods2070});
  cs.push_back({"taints: the tolerating pod is the one that moves",
                {n1, n3Tainted},
                taintPods("n3", true),
                kPods2070,
                kNodeFit,
                "",
                {},
                evicted({"tolerate_pod"})});
  cs.push_back({"taints: tolerating pod with total limit 0",
                {n1, n3Tainted},
                taintPods("n3", true),
                kPods2070,
                kNodeFit,
                "maxNoOfPodsToEvictPerNode: 1\nmaxNoOfPodsToEvictTotal: 0\n",
                {},
                {},
                {"default/tolerate_pod by maxNoOfPodsToEvictTotal"}});
  {
    // A PreferNoSchedule taint counts too (upstream checks taints of every effect).
    NodePtr soft =
        NodeBuilder("n3").allocatable(1000, 3000, 10).taint("key", "value", api::TaintEffect::PreferNoSchedule).build();
    cs.push_back({"taints: PreferNoSchedule also blocks", {n1, soft}, taintPods("n3", false), kPods2070, ""});
  }
  {
    // The count heuristic: one toleration cannot cover a node with two taints, even an Exists-all.
    NodePtr twoTaints = NodeBuilder("n3")
                            .allocatable(1000, 3000, 10)
                            .taint("a", "1", api::TaintEffect::NoSchedule)
                            .taint("b", "2", api::TaintEffect::NoSchedule)
                            .build();
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 7; ++i) pods.push_back(pod("pod_" + std::to_string(i) + "_n1", 200, 0, "n1").build());
    pods.push_back(pod("tolerate_all", 200, 0, "n1")
                       .toleration({"", api::TolerationOp::Exists, "", api::TaintEffect::None, {}})
                       .build());
    pods.push_back(pod("pod_9_n3", 200, 0, "n3").build());
    cs.push_back({"taints: fewer tolerations than taints is not tried (upstream heuristic)",
                  {n1, twoTaints},
                  pods,
                  kPods2070,
                  ""});
  }
  return cs;
}

INSTANTIATE_TEST_SUITE_P(Table, LowNodeUtilizationTest, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(LowNodeUtilization, ReasonNamesUsageThresholdsAndDestinations) {
  ClusterBuilder b;
  for (auto& n : threeNodes()) b.add(n);
  for (auto& p : basicPods()) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "balance", kCpuPods3050), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 4u);
  EXPECT_EQ(out.reasons[0],
            "node n1 is overutilized (cpu 80% > 50%, memory 0%, pods 88.9% > 50%); "
            "underutilized node: n2 (cpu 10%, memory 0%, pods 10%)");
  // Usage is re-read after each eviction.
  EXPECT_EQ(out.reasons[1],
            "node n1 is overutilized (cpu 70% > 50%, memory 0%, pods 77.8% > 50%); "
            "underutilized node: n2 (cpu 10%, memory 0%, pods 10%)");
}

TEST(LowNodeUtilization, ReasonInDeviationModeNamesTheMean) {
  ClusterBuilder b;
  for (auto& n : threeNodes()) b.add(n);
  for (auto& p : basicPods()) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "balance",
                                  "      useDeviationThresholds: true\n"
                                  "      thresholds: {cpu: 5, pods: 5}\n"
                                  "      targetThresholds: {cpu: 5, pods: 5}\n"),
                       *b.snapshot());
  ASSERT_FALSE(out.reasons.empty());
  EXPECT_EQ(out.reasons[0],
            "node n1 is overutilized (cpu 80% > 35% (mean 30% + 5%), memory 0%, pods 88.9% > 38% (mean 33% + 5%)); "
            "underutilized node: n2 (cpu 10%, memory 0%, pods 10%)");
}

TEST(LowNodeUtilization, ReasonListsAtMostThreeDestinations) {
  ClusterBuilder b;
  b.add(node("big", 4000, 3000, 10));
  for (int i = 1; i <= 5; ++i) b.add(node("idle" + std::to_string(i), 4000, 3000, 10));
  for (int i = 1; i <= 8; ++i) b.add(pod("p" + std::to_string(i), 400, 0, "big").build());
  auto out = runPolicy(policyWith(kPlugin, "balance", kCpuPods3050), *b.snapshot());
  ASSERT_FALSE(out.reasons.empty());
  EXPECT_NE(out.reasons[0].find("underutilized nodes: idle1 (cpu 0%, memory 0%, pods 0%), idle2 "
                                "(cpu 0%, memory 0%, pods 0%), idle3 (cpu 0%, memory 0%, pods 0%) and 2 more"),
            std::string::npos)
      << out.reasons[0];
}

TEST(LowNodeUtilization, EarlierEvictionsInTheCycleReduceUsage) {
  // The anti-affinity plugin (deschedule) runs first and evicts one pod from n1; with it gone n1
  // is no longer above 50% pods, so LowNodeUtilization has nothing to move.
  ClusterBuilder b;
  b.add(node("n1", 4000, 3000, 10)).add(node("n2", 4000, 3000, 10));
  for (int i = 1; i <= 5; ++i) b.add(pod("p" + std::to_string(i), 100, 0, "n1").build());
  b.add(pod("order", 100, 0, "n1").app("order").build());
  b.add(pod("payment", 100, 0, "n1").app("payment").antiAffinity("app", "order").build());
  std::string policy =
      "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: test\n  pluginConfig:\n"
      "  - name: RemovePodsViolatingInterPodAntiAffinity\n  - name: LowNodeUtilization\n    args:\n"
      "      thresholds: {pods: 20}\n      targetThresholds: {pods: 60}\n"
      "  plugins:\n    deschedule:\n      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n"
      "    balance:\n      enabled: [LowNodeUtilization]\n";
  auto out = runPolicy(policy, *b.snapshot());
  EXPECT_EQ(out.evicted, std::vector<std::string>{"default/payment"});

  // Without the anti-affinity plugin, n1 (7 of 10 pods) is above 60% and gives one pod away.
  auto alone =
      runPolicy(policyWith(kPlugin, "balance", "      thresholds: {pods: 20}\n      targetThresholds: {pods: 60}\n"),
                *b.snapshot());
  EXPECT_EQ(alone.evicted, std::vector<std::string>{"default/order"});
}

TEST(LowNodeUtilization, FormatPercent) {
  using plugins::lownodeutilization::formatPercent;
  EXPECT_EQ(formatPercent(85), "85");
  EXPECT_EQ(formatPercent(88.888), "88.9");
  EXPECT_EQ(formatPercent(12.04), "12");
  EXPECT_EQ(formatPercent(0), "0");
  EXPECT_EQ(formatPercent(99.96), "100");
}

}  // namespace
}  // namespace kdesched::testing
