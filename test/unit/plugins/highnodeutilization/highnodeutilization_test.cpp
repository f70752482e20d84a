// HighNodeUtilization through the real engine and plan sink: classification at and around the
// threshold, the do-nothing cases, each arg, limits, a PDB refusal, ordering and the destination
// checks (cordoned, tainted, out of room).
#include "pkg/plugins/highnodeutilization/highnodeutilization.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;
using PdbPtr = std::shared_ptr<const api::PodDisruptionBudget>;

const char* kPlugin = "HighNodeUtilization";
// Every node is 4 cpu: 20% is 800m.
const std::string kCpu20 = "      thresholds: {cpu: 20}\n";
const char* kGpu = "example.com/gpu";

struct Case {
  std::string name;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::string pluginArgs = kCpu20;
  std::string evictorArgs = "";
  std::string topLevel = "";
  std::vector<PdbPtr> pdbs = {};
  std::vector<std::string> wantEvicted = {};
  std::vector<std::string> wantRefused = {};
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

PodBuilder pod(const std::string& name, std::int64_t cpu, const std::string& on) {
  PodBuilder b(name);
  b.node(on).requests(cpu, 128 * kMi);
  return b;
}
// node1 at 50% cpu: above the threshold, a destination.
std::vector<PodPtr> busy(const std::string& on = "node1") {
  return {pod("busy-1", 1000, on).build(), pod("busy-2", 1000, on).build()};
}
NodePtr n(const std::string& name) { return NodeBuilder(name).build(); }

class HighNodeUtilizationTest : public ::testing::TestWithParam<Case> {};

TEST_P(HighNodeUtilizationTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  for (auto& x : c.nodes) b.add(x);
  for (auto& x : c.pods) b.add(x);
  for (auto& x : c.pdbs) b.add(x);
  auto out = runPolicy(policyWith(kPlugin, "balance", c.pluginArgs, c.evictorArgs, c.topLevel), *b.snapshot());
  EXPECT_EQ(out.evicted, c.wantEvicted);
  EXPECT_EQ(out.refused, c.wantRefused);
}

std::vector<PodPtr> with(std::vector<PodPtr> a, std::vector<PodPtr> more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::vector<Case> classificationCases() {
  std::vector<Case> cs;
  cs.push_back({.name = "underutilized node drained toward the busier one",
                .nodes = {n("node1"), n("node2")},
                .pods = with(busy(), {pod("p", 100, "node2").build()}),
                .wantEvicted = {"default/p"}});
  cs.push_back({.name = "usage exactly at the threshold is underutilized",
                .nodes = {n("node1"), n("node2")},
                .pods = with(busy(), {pod("p", 800, "node2").build()}),
                .wantEvicted = {"default/p"}});
  cs.push_back({.name = "usage just above the threshold is not",
                .nodes = {n("node1"), n("node2")},
                .pods = with(busy(), {pod("p", 801, "node2").build()})});
  cs.push_back({.name = "every node underutilized: nothing",
                .nodes = {n("node1"), n("node2")},
                .pods = {pod("a", 100, "node1").build(), pod("p", 100, "node2").build()}});
  cs.push_back({.name = "no node underutilized: nothing",
                .nodes = {n("node1"), n("node2")},
                .pods = with(busy(), busy("node2"))});
  cs.push_back({.name = "an empty node is underutilized but has nothing to evict",
                .nodes = {n("node1"), n("node2"), n("node3")},
                .pods = with(busy(), {pod("p", 100, "node2").build()}),
                .wantEvicted = {"default/p"}});
  // Upstream does not ask whether an underutilized node is schedulable.
  cs.push_back({.name = "cordoned underutilized node is drained too",
                .nodes = {n("node1"), NodeBuilder("node2").unschedulable().build()},
                .pods = with(busy(), {pod("p", 100, "node2").build()}),
                .wantEvicted = {"default/p"}});
  cs.push_back({.name = "the only other node is cordoned: nothing",
                .nodes = {NodeBuilder("node1").unschedulable().build(), n("node2")},
                .pods = with(busy(), {pod("p", 100, "node2").build()})});
  cs.push_back(
      {.name = "pod does not tolerate the destination's taint",
       .nodes = {NodeBuilder("node1").taint("dedicated", "db", api::TaintEffect::NoSchedule).build(), n("node2")},
       .pods = with(busy(), {pod("p", 100, "node2").build()})});
  cs.push_back(
      {.name = "pod tolerates the destination's taint",
       .nodes = {NodeBuilder("node1").taint("dedicated", "db", api::TaintEffect::NoSchedule).build(), n("node2")},
       .pods = with(busy(),
                    {pod("p", 100, "node2")
                         .toleration({"dedicated", api::TolerationOp::Exists, "", api::TaintEffect::None, std::nullopt})
                         .build()}),
       .wantEvicted = {"default/p"}});
  return cs;
}

std::vector<Case> argCases() {
  std::vector<Case> cs;
  std::vector<PodPtr> twoUnder = with(busy(), {pod("p", 100, "node2").build(), pod("q", 100, "node3").build()});
  cs.push_back({.name = "numberOfNodes equal to the underutilized count: nothing",
                .nodes = {n("node1"), n("node2"), n("node3")},
                .pods = twoUnder,
                .pluginArgs = kCpu20 + "      numberOfNodes: 2\n"});
  cs.push_back({.name = "numberOfNodes below the underutilized count",
                .nodes = {n("node1"), n("node2"), n("node3")},
                .pods = twoUnder,
                .pluginArgs = kCpu20 + "      numberOfNodes: 1\n",
                .wantEvicted = {"default/p", "default/q"}});
  cs.push_back({.name = "evictableNamespaces exclude",
                .nodes = {n("node1"), n("node2")},
                .pods = with(busy(), {PodBuilder("a", "batch").node("node2").build(), pod("b", 100, "node2").build()}),
                .pluginArgs = kCpu20 + "      evictableNamespaces:\n        exclude: [batch]\n",
                .wantEvicted = {"default/b"}});
  std::vector<NodePtr> gpuNodes = {NodeBuilder("node1").extended(kGpu, 4).build(),
                                   NodeBuilder("node2").extended(kGpu, 4).build()};
  std::vector<PodPtr> gpuPods = {pod("trainer", 100, "node1").request(kGpu, 3000).build(),
                                 pod("a-web", 100, "node2").build(),
                                 pod("b-gpu", 100, "node2").request(kGpu, 1000).build()};
  cs.push_back({.name = "without evictionModes every pod goes until a resource runs out",
                .nodes = gpuNodes,
                .pods = gpuPods,
                .pluginArgs = "      thresholds: {example.com/gpu: 50}\n",
                .wantEvicted = {"default/a-web", "default/b-gpu"}});
  cs.push_back(
      {.name = "OnlyThresholdingResources skips pods without such a request",
       .nodes = gpuNodes,
       .pods = gpuPods,
       .pluginArgs = "      thresholds: {example.com/gpu: 50}\n      evictionModes: [OnlyThresholdingResources]\n",
       .wantEvicted = {"default/b-gpu"}});
  return cs;
}

std::vector<Case> limitAndOrderCases() {
  std::vector<Case> cs;
  cs.push_back({.name = "less used underutilized node first, lowest priority first",
                .nodes = {n("node1"), n("node2"), n("node3")},
                .pods = with(busy(), {pod("p-high", 100, "node2").priority(1000).build(),
                                      pod("p-low", 100, "node2").build(), pod("q", 50, "node3").build()}),
                .wantEvicted = {"default/q", "default/p-low", "default/p-high"}});
  // node1 has room for one more pod only: the first eviction uses it up.
  cs.push_back({.name = "stops when the destinations are out of room",
                .nodes = {NodeBuilder("node1").allocatable(4000, 8 * kGi, 3).build(), n("node2")},
                .pods = with(busy(), {pod("a", 100, "node2").build(), pod("b", 100, "node2").build()}),
                .wantEvicted = {"default/a"}});
  cs.push_back({.name = "PDB refuses",
                .nodes = {n("node1"), n("node2")},
                .pods = with(busy(), {pod("p", 100, "node2").app("web").build()}),
                .pdbs = {pdb("web", "default", selectorOf("app", "web"), 0)},
                .wantRefused = {"default/p by PodDisruptionBudget default/web"}});
  cs.push_back({.name = "DaemonSet pod is not evicted",
                .nodes = {n("node1"), n("node2")},
                .pods = with(busy(), {pod("p", 100, "node2").owner("DaemonSet", "ds").build()})});
  // node3 comes first: one pod's 128Mi weighs more in upstream's raw sum than node2's extra cpu.
  cs.push_back({.name = "per-node limit moves on to the next node",
                .nodes = {n("node1"), n("node2"), n("node3")},
                .pods = with(busy(), {pod("a", 100, "node2").build(), pod("b", 100, "node2").build(),
                                      pod("c", 200, "node3").build()}),
                .topLevel = "maxNoOfPodsToEvictPerNode: 1\n",
                .wantEvicted = {"default/c", "default/a"},
                .wantRefused = {"default/b by maxNoOfPodsToEvictPerNode"}});
  cs.push_back({.name = "total limit",
                .nodes = {n("node1"), n("node2"), n("node3")},
                .pods = with(busy(), {pod("a", 100, "node2").build(), pod("c", 200, "node3").build()}),
                .topLevel = "maxNoOfPodsToEvictTotal: 1\n",
                .wantEvicted = {"default/a"},
                .wantRefused = {"default/c by maxNoOfPodsToEvictTotal"}});
  cs.push_back({.name = "total limit 0",
                .nodes = {n("node1"), n("node2")},
                .pods = with(busy(), {pod("a", 100, "node2").build()}),
                .topLevel = "maxNoOfPodsToEvictTotal: 0\n",
                .wantRefused = {"default/a by maxNoOfPodsToEvictTotal"}});
  cs.push_back({.name = "nodeFit: the pod fits no destination",
                .nodes = {NodeBuilder("node1").allocatable(2100, 8 * kGi).build(), n("node2")},
                .pods = with(busy(), {pod("p", 200, "node2").build()}),
                .evictorArgs = "      nodeFit: true\n",
                .wantRefused = {"default/p by DefaultEvictor"}});
  return cs;
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  std::string s = info.param.name;
  for (auto& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Classification, HighNodeUtilizationTest, ::testing::ValuesIn(classificationCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Args, HighNodeUtilizationTest, ::testing::ValuesIn(argCases()), caseName);
INSTANTIATE_TEST_SUITE_P(LimitsAndOrder, HighNodeUtilizationTest, ::testing::ValuesIn(limitAndOrderCases()), caseName);

TEST(HighNodeUtilization, ReasonNamesTheRuleAndTheDestinations) {
  ClusterBuilder b;
  b.add(n("node1")).add(n("node2"));
  for (auto& p : with(busy(), {pod("p", 400, "node2").build()})) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "balance", kCpu20), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(out.reasons[0],
            "node node2 is underutilized (cpu 10% <= 20%, memory 1.6%, pods 0.9%); its pods can pack onto node "
            "node1 (cpu 50%, memory 3.1%, pods 1.8%)");
}

}  // namespace
}  // namespace kdesched::testing
