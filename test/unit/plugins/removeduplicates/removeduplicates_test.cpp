#include "pkg/plugins/removeduplicates/removeduplicates.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;
using api::TaintEffect;

const char* kPlugin = "RemoveDuplicates";

struct Case {
  std::string name;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::string pluginArgs;
  std::string topLevel;
  std::vector<std::string> wantEvicted;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs = {};
  // When set, the refusals too ("namespace/name by <who>"): a plugin that stops at a limit, or
  // skips a pod it already evicted, asks no more.
  std::optional<std::vector<std::string>> wantRefused = std::nullopt;
  std::string evictorArgs = "";
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<NodePtr> threeNodes() {
  return {NodeBuilder("node1").build(), NodeBuilder("node2").build(), NodeBuilder("node3").build()};
}
std::vector<NodePtr> sixNodes() {
  std::vector<NodePtr> out = threeNodes();
  for (const char* n : {"node4", "node5", "node6"}) out.push_back(NodeBuilder(n).build());
  return out;
}
std::vector<NodePtr> twoNodes() { return {NodeBuilder("node1").build(), NodeBuilder("node2").build()}; }

PodBuilder web(std::string name, std::string_view node, std::vector<std::string> images = {"nginx:1.25"}) {
  return PodBuilder(std::move(name)).node(node).owner("ReplicaSet", "web").app("web").images(std::move(images));
}

// Three pods of one owner on node1: on three nodes each should hold one, so two go.
std::vector<PodPtr> threeOnNode1() {
  return {web("a", "node1").build(), web("b", "node1").build(), web("c", "node1").build()};
}

PodPtr withSecondOwner(PodBuilder b, std::string kind, std::string name) {
  api::Pod p = *b.build();
  p.owners.push_back({api::Symbol("apps/v1"), api::Symbol(kind), api::Symbol(name), "uid-" + name, false});
  return std::make_shared<const api::Pod>(std::move(p));
}

class RemoveDuplicatesTest : public ::testing::TestWithParam<Case> {};

TEST_P(RemoveDuplicatesTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  for (auto& n : c.nodes) b.add(n);
  for (auto& p : c.pods) b.add(p);
  for (auto& p : c.pdbs) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "balance", c.pluginArgs, c.evictorArgs, c.topLevel), *b.snapshot());
  EXPECT_EQ(out.evicted, c.wantEvicted);
  if (c.wantRefused) {
    EXPECT_EQ(out.refused, *c.wantRefused);
  }
}

std::vector<Case> groupingCases() {
  std::vector<Case> cs;
  cs.push_back({"one pod per node is no duplicate",
                threeNodes(),
                {web("a", "node1").build(), web("b", "node2").build(), web("c", "node3").build()},
                "",
                "",
                {}});
  cs.push_back(
      {"extras beyond the first on a node go", threeNodes(), threeOnNode1(), "", "", {"default/b", "default/c"}});
  cs.push_back({"different images are not duplicates",
                threeNodes(),
                {web("a", "node1").build(), web("b", "node1", {"redis:7"}).build()},
                "",
                "",
                {}});
  cs.push_back({"the same images in another order are duplicates",
                threeNodes(),
                {web("a", "node1", {"x:1", "y:1"}).build(), web("b", "node1", {"y:1", "x:1"}).build()},
                "",
                "",
                {"default/b"}});
  // One key: 3 pods over 2 nodes allow 2 on node1. Keyed by unsorted images, b would be alone.
  cs.push_back({"the same images in another order are one owner key",
                twoNodes(),
                {web("a", "node1", {"x:1", "y:1"}).build(), web("b", "node1", {"y:1", "x:1"}).build(),
                 web("c", "node2", {"x:1", "y:1"}).build()},
                "",
                "",
                {}});
  cs.push_back({"different owners are not duplicates",
                threeNodes(),
                {web("a", "node1").build(), web("b", "node1").owner("ReplicaSet", "api").build()},
                "",
                "",
                {}});
  cs.push_back({"pods without an owner are never duplicates",
                threeNodes(),
                {web("a", "node1").bare().build(), web("b", "node1").bare().build()},
                "",
                "",
                {}});
  cs.push_back({"terminal pods are not counted",
                threeNodes(),
                {web("a", "node1").build(), web("b", "node1").phase(api::PodPhase::Succeeded).build()},
                "",
                "",
                {}});
  // a fails the evictor's filter, so it is not counted: b, c and d over 2 nodes allow 2 on node1.
  cs.push_back({"pods the evictor refuses are not counted",
                twoNodes(),
                {web("a", "node1").priority(1000).build(), web("b", "node1").build(), web("c", "node1").build(),
                 web("d", "node2").build()},
                "",
                "",
                {},
                {},
                std::nullopt,
                "      priorityThreshold: {value: 100}\n"});
  cs.push_back({"excludeOwnerKinds", threeNodes(), threeOnNode1(), "      excludeOwnerKinds: [ReplicaSet]\n", "", {}});
  cs.push_back({"excludeOwnerKinds of another kind",
                threeNodes(),
                threeOnNode1(),
                "      excludeOwnerKinds: [Job]\n",
                "",
                {"default/b", "default/c"}});
  cs.push_back(
      {"namespaces exclude", threeNodes(), threeOnNode1(), "      namespaces: {exclude: [default]}\n", "", {}});
  cs.push_back({"namespaces include",
                threeNodes(),
                threeOnNode1(),
                "      namespaces: {include: [default]}\n",
                "",
                {"default/b", "default/c"}});
  // Both owners count the pod and both call it a duplicate; it is evicted once.
  cs.push_back(
      {"a pod of two owners is considered once per owner, evicted once",
       threeNodes(),
       {withSecondOwner(web("a", "node1"), "Job", "batch"), withSecondOwner(web("b", "node1"), "Job", "batch")},
       "",
       "",
       {"default/b"},
       {},
       std::vector<std::string>{}});
  // As web's, 5 pods over 2 nodes allow 3 per node; as batch's, 2 pods allow 1: b goes for batch.
  cs.push_back({"a pod of two owners is evicted for either owner",
                twoNodes(),
                {withSecondOwner(web("a", "node1"), "Job", "batch"), withSecondOwner(web("b", "node1"), "Job", "batch"),
                 web("c", "node2").build(), web("d", "node2").build(), web("e", "node2").build()},
                "",
                "",
                {"default/b"}});
  cs.push_back({"two owners and one owner are not duplicates",
                threeNodes(),
                {withSecondOwner(web("a", "node1"), "Job", "batch"), web("b", "node1").build()},
                "",
                "",
                {}});
  return cs;
}

std::vector<Case> targetNodeCases() {
  std::vector<Case> cs;
  NodePtr tainted2 = NodeBuilder("node2").taint("dedicated", "gpu", TaintEffect::NoSchedule).build();
  NodePtr tainted3 = NodeBuilder("node3").taint("dedicated", "gpu", TaintEffect::NoExecute).build();
  NodePtr soft3 = NodeBuilder("node3").taint("dedicated", "gpu", TaintEffect::PreferNoSchedule).build();
  cs.push_back({"one node cluster: nowhere else to go", {NodeBuilder("node1").build()}, threeOnNode1(), "", "", {}});
  cs.push_back({"the other nodes are tainted: nowhere else to go",
                {NodeBuilder("node1").build(), tainted2, tainted3},
                threeOnNode1(),
                "",
                "",
                {}});
  // Three pods over two possible nodes: two may stay on node1.
  cs.push_back({"PreferNoSchedule does not remove a target node, NoSchedule does",
                {NodeBuilder("node1").build(), tainted2, soft3},
                threeOnNode1(),
                "",
                "",
                {"default/c"}});
  cs.push_back({"tolerated taints keep target nodes",
                {NodeBuilder("node1").build(), tainted2, tainted3},
                {web("a", "node1")
                     .toleration({"dedicated", api::TolerationOp::Exists, "", TaintEffect::None, std::nullopt})
                     .build(),
                 web("b", "node1")
                     .toleration({"dedicated", api::TolerationOp::Exists, "", TaintEffect::None, std::nullopt})
                     .build(),
                 web("c", "node1")
                     .toleration({"dedicated", api::TolerationOp::Exists, "", TaintEffect::None, std::nullopt})
                     .build()},
                "",
                "",
                {"default/b", "default/c"}});
  cs.push_back(
      {"nodeSelector limits target nodes",
       {NodeBuilder("node1").label("disk", "ssd").build(), NodeBuilder("node2").label("disk", "ssd").build(),
        NodeBuilder("node3").build()},
       {web("a", "node1").nodeSelector("disk", "ssd").build(), web("b", "node1").nodeSelector("disk", "ssd").build(),
        web("c", "node1").nodeSelector("disk", "ssd").build()},
       "",
       "",
       {"default/c"}});
  // The duplicates b (ssd only: node1, node2) and c, d (anywhere: all four) give the union of their
  // target nodes, four: at most one per node, so three go (two nodes would leave two on node1).
  cs.push_back({"target nodes are the union over the duplicates' distinct constraints",
                {NodeBuilder("node1").label("disk", "ssd").build(), NodeBuilder("node2").label("disk", "ssd").build(),
                 NodeBuilder("node3").build(), NodeBuilder("node4").build()},
                {web("a", "node1").build(), web("b", "node1").nodeSelector("disk", "ssd").build(),
                 web("c", "node1").build(), web("d", "node1").build()},
                "",
                "",
                {"default/b", "default/c", "default/d"}});
  // 5 pods over 3 nodes: at most ceil(5/3) = 2 per node, so node1 keeps two and node2's two stay.
  cs.push_back({"upperAvg rounds up",
                threeNodes(),
                {web("a", "node1").build(), web("b", "node1").build(), web("c", "node1").build(),
                 web("d", "node2").build(), web("e", "node2").build()},
                "",
                "",
                {"default/c"}});
  // 5 pods over 2 nodes: at most 3 per node.
  cs.push_back({"upperAvg rounds up on two nodes",
                twoNodes(),
                {web("a", "node1").build(), web("b", "node1").build(), web("c", "node1").build(),
                 web("d", "node2").build(), web("e", "node2").build()},
                "",
                "",
                {}});
  return cs;
}

std::vector<Case> limitCases() {
  std::vector<Case> cs;
  std::vector<PodPtr> four = threeOnNode1();
  four.push_back(web("d", "node1").build());
  // 4 pods over 6 nodes: one per node, so b, c and d are extras.
  cs.push_back({"per-node limit: the first refusal ends the node",
                sixNodes(),
                four,
                "",
                "maxNoOfPodsToEvictPerNode: 1\n",
                {"default/b"},
                {},
                std::vector<std::string>{"default/c by maxNoOfPodsToEvictPerNode"}});
  cs.push_back({"total limit: the first refusal ends the run",
                sixNodes(),
                four,
                "",
                "maxNoOfPodsToEvictTotal: 1\n",
                {"default/b"},
                {},
                std::vector<std::string>{"default/c by maxNoOfPodsToEvictTotal"}});
  cs.push_back({"total limit 0", threeNodes(), threeOnNode1(), "", "maxNoOfPodsToEvictTotal: 0\n", {}});
  cs.push_back({"a PDB refuses",
                threeNodes(),
                threeOnNode1(),
                "",
                "",
                {},
                {pdb("web", "default", selectorOf("app", "web"), 0)}});
  cs.push_back({"a PDB allowing one",
                threeNodes(),
                threeOnNode1(),
                "",
                "",
                {"default/b"},
                {pdb("web", "default", selectorOf("app", "web"), 1)}});
  // Owners by namespace, kind and name, then nodes by name; not the listing order (zeta first).
  cs.push_back(
      {"owners in key order, then nodes by name",
       sixNodes(),
       {web("z1", "node1").owner("ReplicaSet", "zeta").build(), web("z2", "node1").owner("ReplicaSet", "zeta").build(),
        web("a1", "node2").owner("ReplicaSet", "alpha").build(),
        web("a2", "node2").owner("ReplicaSet", "alpha").build(),
        web("a3", "node1").owner("ReplicaSet", "alpha").build(),
        web("a4", "node1").owner("ReplicaSet", "alpha").build()},
       "",
       "",
       {"default/a4", "default/a2", "default/z2"}});
  return cs;
}

INSTANTIATE_TEST_SUITE_P(Grouping, RemoveDuplicatesTest, ::testing::ValuesIn(groupingCases()));
INSTANTIATE_TEST_SUITE_P(TargetNodes, RemoveDuplicatesTest, ::testing::ValuesIn(targetNodeCases()));
INSTANTIATE_TEST_SUITE_P(Limits, RemoveDuplicatesTest, ::testing::ValuesIn(limitCases()));

TEST(RemoveDuplicates, ReasonInPlainWords) {
  ClusterBuilder b;
  for (auto& n : threeNodes()) b.add(n);
  for (auto& p : threeOnNode1()) b.add(p);
  b.add(web("d", "node2").build());
  b.add(web("e", "node2").build());
  b.add(web("f", "node3").build());
  auto out = runPolicy(policyWith(kPlugin, "balance"), *b.snapshot());
  ASSERT_EQ(out.evicted, (std::vector<std::string>{"default/c"}));
  EXPECT_EQ(
      out.reasons[0],
      "3 pods of ReplicaSet default/web with images [nginx:1.25] on node1, at most 2 per node (6 pods over 3 nodes)");
}

}  // namespace
}  // namespace kdesched::testing
