#include "pkg/plugins/nodeaffinity/nodeaffinity.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;

const char* kPlugin = "RemovePodsViolatingNodeAffinity";
const std::string kRequiredArgs = "      nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]\n";
const std::string kPreferredArgs = "      nodeAffinityType: [preferredDuringSchedulingIgnoredDuringExecution]\n";

struct Case {
  std::string name;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::string pluginArgs;
  std::string evictorArgs;
  std::string topLevel;
  std::vector<std::string> wantEvicted;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs = {};
};

// node1 lost the label the pods require; node2 still has it.
NodePtr unlabelled() { return NodeBuilder("node1").build(); }
NodePtr labelled() { return NodeBuilder("node2").label("disk", "ssd").build(); }

PodBuilder requiring(std::string name, std::string node = "node1") {
  return PodBuilder(std::move(name)).node(node).requiredNodeAffinity("disk", api::NodeSelectorOp::In, {"ssd"});
}

class NodeAffinityTest : public ::testing::TestWithParam<Case> {};

TEST_P(NodeAffinityTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  for (auto& n : c.nodes) b.add(n);
  for (auto& p : c.pods) b.add(p);
  for (auto& p : c.pdbs) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "deschedule", c.pluginArgs, c.evictorArgs, c.topLevel), *b.snapshot());
  EXPECT_EQ(out.evicted, c.wantEvicted);
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  cs.push_back({"required: node no longer matches, another fits",
                {unlabelled(), labelled()},
                {requiring("p").build()},
                kRequiredArgs,
                "",
                "",
                {"default/p"}});
  cs.push_back({"required: node still matches",
                {unlabelled(), labelled()},
                {requiring("p", "node2").build()},
                kRequiredArgs,
                "",
                "",
                {}});
  cs.push_back({"required: no other node fits",
                {unlabelled(), NodeBuilder("node2").build()},
                {requiring("p").build()},
                kRequiredArgs,
                "",
                "",
                {}});
  cs.push_back({"required: the only matching node is unschedulable",
                {unlabelled(), NodeBuilder("node2").label("disk", "ssd").unschedulable().build()},
                {requiring("p").build()},
                kRequiredArgs,
                "",
                "",
                {}});
  cs.push_back(
      {"required: the only matching node is tainted",
       {unlabelled(), NodeBuilder("node2").label("disk", "ssd").taint("k", "", api::TaintEffect::NoSchedule).build()},
       {requiring("p").build()},
       kRequiredArgs,
       "",
       "",
       {}});
  cs.push_back({"required: the only matching node is full",
                {unlabelled(), NodeBuilder("node2").label("disk", "ssd").allocatable(50, 8 * kGi).build()},
                {requiring("p").build()},
                kRequiredArgs,
                "",
                "",
                {}});
  cs.push_back({"required: nodeSelector only is not node affinity (upstream)",
                {unlabelled(), labelled()},
                {PodBuilder("p").node("node1").nodeSelector("disk", "ssd").build()},
                kRequiredArgs,
                "",
                "",
                {}});
  cs.push_back({"required: nodeSelector combined with affinity",
                {unlabelled(), labelled()},
                {requiring("p", "node2").nodeSelector("zone", "x").build()},
                kRequiredArgs,
                "",
                "",
                {}});
  cs.push_back({"required: terminating pod not evicted",
                {unlabelled(), labelled()},
                {requiring("p").terminating().build()},
                kRequiredArgs,
                "",
                "",
                {}});
  cs.push_back({"required: DaemonSet pod not evicted",
                {unlabelled(), labelled()},
                {requiring("p").owner("DaemonSet", "ds").build()},
                kRequiredArgs,
                "",
                "",
                {}});
  cs.push_back({"required: per-node limit",
                {unlabelled(), labelled()},
                {requiring("a").build(), requiring("b").build()},
                kRequiredArgs,
                "",
                "maxNoOfPodsToEvictPerNode: 1\n",
                {"default/a"}});
  cs.push_back({"required: total limit",
                {unlabelled(), labelled(), NodeBuilder("node3").build()},
                {requiring("a").build(), requiring("b", "node3").build()},
                kRequiredArgs,
                "",
                "maxNoOfPodsToEvictTotal: 1\n",
                {"default/a"}});
  cs.push_back({"required: total limit 0",
                {unlabelled(), labelled()},
                {requiring("a").build()},
                kRequiredArgs,
                "",
                "maxNoOfPodsToEvictTotal: 0\n",
                {}});
  cs.push_back({"required: namespace limit",
                {unlabelled(), labelled()},
                {requiring("a").build(), requiring("b").build()},
                kRequiredArgs,
                "",
                "maxNoOfPodsToEvictPerNamespace: 1\n",
                {"default/a"}});
  cs.push_back({"required: PDB refuses",
                {unlabelled(), labelled()},
                {requiring("a").app("web").build()},
                kRequiredArgs,
                "",
                "",
                {},
                {pdb("web", "default", selectorOf("app", "web"), 0)}});
  cs.push_back({"required: nodeFit on, the other node lacks room for the pod",
                {unlabelled(), NodeBuilder("node2").label("disk", "ssd").allocatable(50, 8 * kGi).build(),
                 NodeBuilder("node3").build()},
                {requiring("a").build()},
                kRequiredArgs,
                "      nodeFit: true\n",
                "",
                {}});
  cs.push_back(
      {"required: namespaces include filters",
       {unlabelled(), labelled()},
       {requiring("a").build(),
        PodBuilder("b", "prod").node("node1").requiredNodeAffinity("disk", api::NodeSelectorOp::In, {"ssd"}).build()},
       kRequiredArgs + "      namespaces:\n        include: [prod]\n",
       "",
       "",
       {"prod/b"}});
  cs.push_back({"required: labelSelector filters",
                {unlabelled(), labelled()},
                {requiring("a").app("web").build(), requiring("b").app("db").build()},
                kRequiredArgs + "      labelSelector:\n        matchLabels: {app: db}\n",
                "",
                "",
                {"default/b"}});
  cs.push_back({"required type does not act on preferred-only pods",
                {unlabelled(), labelled()},
                {PodBuilder("p").node("node1").preferredNodeAffinity(10, "disk", {"ssd"}).build()},
                kRequiredArgs,
                "",
                "",
                {}});
  cs.push_back({"preferred: another node scores higher",
                {unlabelled(), labelled()},
                {PodBuilder("p").node("node1").preferredNodeAffinity(10, "disk", {"ssd"}).build()},
                kPreferredArgs,
                "",
                "",
                {"default/p"}});
  cs.push_back({"preferred: current node already best",
                {unlabelled(), labelled()},
                {PodBuilder("p").node("node2").preferredNodeAffinity(10, "disk", {"ssd"}).build()},
                kPreferredArgs,
                "",
                "",
                {}});
  cs.push_back({"preferred: equal score does not move",
                {NodeBuilder("node1").label("disk", "ssd").build(), labelled()},
                {PodBuilder("p").node("node1").preferredNodeAffinity(10, "disk", {"ssd"}).build()},
                kPreferredArgs,
                "",
                "",
                {}});
  cs.push_back({"preferred: fits nowhere (every node unschedulable), not evicted",
                {NodeBuilder("node1").unschedulable().build(),
                 NodeBuilder("node2").label("disk", "ssd").unschedulable().build()},
                {PodBuilder("p").node("node1").preferredNodeAffinity(10, "disk", {"ssd"}).build()},
                kPreferredArgs,
                "",
                "",
                {}});
  cs.push_back(
      {"both types in order",
       {unlabelled(), labelled()},
       {requiring("a").build(), PodBuilder("b").node("node1").preferredNodeAffinity(5, "disk", {"ssd"}).build()},
       "      nodeAffinityType: [preferredDuringSchedulingIgnoredDuringExecution, "
       "requiredDuringSchedulingIgnoredDuringExecution]\n",
       "",
       "",
       {"default/b", "default/a"}});
  return cs;
}

INSTANTIATE_TEST_SUITE_P(Table, NodeAffinityTest, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(NodeAffinity, ReasonNamesTheRuleAndNode) {
  ClusterBuilder b;
  b.add(unlabelled()).add(labelled()).add(requiring("p").build());
  auto out = runPolicy(policyWith(kPlugin, "deschedule", kRequiredArgs), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(out.reasons[0], "required node affinity (disk In [ssd]) no longer matches node node1");
}

}  // namespace
}  // namespace kdesched::testing
