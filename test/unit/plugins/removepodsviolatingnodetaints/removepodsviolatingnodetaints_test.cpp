#include "pkg/plugins/removepodsviolatingnodetaints/removepodsviolatingnodetaints.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;
using api::TaintEffect;
using api::TolerationOp;

const char* kPlugin = "RemovePodsViolatingNodeTaints";

struct Case {
  std::string name;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::string pluginArgs;
  std::string topLevel;
  std::vector<std::string> wantEvicted;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs = {};
  std::string evictorArgs = "";
};

NodePtr tainted(std::string name, std::string key, std::string value, TaintEffect e) {
  return NodeBuilder(std::move(name)).taint(std::move(key), std::move(value), e).build();
}
NodePtr dedicated() { return tainted("node1", "dedicated", "gpu", TaintEffect::NoSchedule); }
NodePtr clean() { return NodeBuilder("node2").build(); }

PodBuilder on1(std::string name) { return PodBuilder(std::move(name)).node("node1"); }
api::Toleration tol(std::string key, TolerationOp op, std::string value, TaintEffect e = TaintEffect::None) {
  return {std::move(key), op, std::move(value), e, std::nullopt};
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class NodeTaintsTest : public ::testing::TestWithParam<Case> {};

TEST_P(NodeTaintsTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  for (auto& n : c.nodes) b.add(n);
  for (auto& p : c.pods) b.add(p);
  for (auto& p : c.pdbs) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "deschedule", c.pluginArgs, c.evictorArgs, c.topLevel), *b.snapshot());
  EXPECT_EQ(out.evicted, c.wantEvicted);
}

std::vector<Case> tolerationCases() {
  std::vector<Case> cs;
  cs.push_back({"untolerated NoSchedule taint", {dedicated(), clean()}, {on1("p").build()}, "", "", {"default/p"}});
  cs.push_back(
      {"pods on untainted nodes stay", {dedicated(), clean()}, {PodBuilder("p").node("node2").build()}, "", "", {}});
  cs.push_back({"Equal toleration with the value",
                {dedicated(), clean()},
                {on1("p").toleration(tol("dedicated", TolerationOp::Equal, "gpu")).build()},
                "",
                "",
                {}});
  cs.push_back({"Equal toleration with another value",
                {dedicated(), clean()},
                {on1("p").toleration(tol("dedicated", TolerationOp::Equal, "cpu")).build()},
                "",
                "",
                {"default/p"}});
  cs.push_back({"Exists toleration of the key",
                {dedicated(), clean()},
                {on1("p").toleration(tol("dedicated", TolerationOp::Exists, "")).build()},
                "",
                "",
                {}});
  cs.push_back({"empty key with Exists tolerates every taint",
                {dedicated(), clean()},
                {on1("p").toleration(tol("", TolerationOp::Exists, "")).build()},
                "",
                "",
                {}});
  cs.push_back({"toleration of another effect does not count",
                {dedicated(), clean()},
                {on1("p").toleration(tol("dedicated", TolerationOp::Exists, "", TaintEffect::NoExecute)).build()},
                "",
                "",
                {"default/p"}});
  cs.push_back({"toleration of the NoSchedule effect",
                {dedicated(), clean()},
                {on1("p").toleration(tol("dedicated", TolerationOp::Exists, "", TaintEffect::NoSchedule)).build()},
                "",
                "",
                {}});
  // Gt/Lt compare the taint's value with the toleration's as integers (here 990 against 950).
  cs.push_back({"Gt toleration below the taint value",
                {tainted("node1", "sla", "990", TaintEffect::NoSchedule), clean()},
                {on1("p").toleration(tol("sla", TolerationOp::Gt, "950")).build()},
                "",
                "",
                {}});
  cs.push_back({"Lt toleration below the taint value",
                {tainted("node1", "sla", "990", TaintEffect::NoSchedule), clean()},
                {on1("p").toleration(tol("sla", TolerationOp::Lt, "950")).build()},
                "",
                "",
                {"default/p"}});
  // tolerationSeconds only bounds NoExecute: a NoSchedule toleration with it still tolerates.
  cs.push_back({"tolerationSeconds is irrelevant for NoSchedule",
                {dedicated(), clean()},
                {on1("p").toleration({"dedicated", TolerationOp::Exists, "", TaintEffect::None, 0}).build()},
                "",
                "",
                {}});
  cs.push_back({"one of two taints untolerated",
                {NodeBuilder("node1")
                     .taint("dedicated", "gpu", TaintEffect::NoSchedule)
                     .taint("maintenance", "", TaintEffect::NoSchedule)
                     .build(),
                 clean()},
                {on1("p").toleration(tol("dedicated", TolerationOp::Exists, "")).build()},
                "",
                "",
                {"default/p"}});
  // Upstream v0.36 never looks at NoExecute taints: the kubelet's taint manager evicts for those.
  cs.push_back({"NoExecute taints are not considered",
                {tainted("node1", "dedicated", "gpu", TaintEffect::NoExecute), clean()},
                {on1("p").build()},
                "",
                "",
                {}});
  cs.push_back({"PreferNoSchedule ignored by default",
                {tainted("node1", "soft", "", TaintEffect::PreferNoSchedule), clean()},
                {on1("p").build()},
                "",
                "",
                {}});
  cs.push_back({"PreferNoSchedule with includePreferNoSchedule",
                {tainted("node1", "soft", "", TaintEffect::PreferNoSchedule), clean()},
                {on1("p").build()},
                "      includePreferNoSchedule: true\n",
                "",
                {"default/p"}});
  return cs;
}

std::vector<Case> argCases() {
  std::vector<Case> cs;
  cs.push_back({"excludedTaints by key",
                {dedicated(), clean()},
                {on1("p").build()},
                "      excludedTaints: [dedicated]\n",
                "",
                {}});
  cs.push_back({"excludedTaints by key=value",
                {dedicated(), clean()},
                {on1("p").build()},
                "      excludedTaints: [dedicated=gpu]\n",
                "",
                {}});
  cs.push_back({"excludedTaints with another value",
                {dedicated(), clean()},
                {on1("p").build()},
                "      excludedTaints: [dedicated=cpu]\n",
                "",
                {"default/p"}});
  cs.push_back({"includedTaints names the taint",
                {dedicated(), clean()},
                {on1("p").build()},
                "      includedTaints: [dedicated=gpu]\n",
                "",
                {"default/p"}});
  cs.push_back({"includedTaints names another taint",
                {dedicated(), clean()},
                {on1("p").build()},
                "      includedTaints: [maintenance]\n",
                "",
                {}});
  // Upstream's quirk, kept: a present but empty list is non-nil and so includes no taint.
  cs.push_back({"includedTaints empty list matches nothing",
                {dedicated(), clean()},
                {on1("p").build()},
                "      includedTaints: []\n",
                "",
                {}});
  cs.push_back({"includedTaints null is unset",
                {dedicated(), clean()},
                {on1("p").build()},
                "      includedTaints: null\n",
                "",
                {"default/p"}});
  cs.push_back({"namespaces include",
                {dedicated(), clean()},
                {on1("a").build(), PodBuilder("b", "prod").node("node1").build()},
                "      namespaces:\n        include: [prod]\n",
                "",
                {"prod/b"}});
  cs.push_back({"labelSelector",
                {dedicated(), clean()},
                {on1("a").app("web").build(), on1("b").app("db").build()},
                "      labelSelector:\n        matchLabels: {app: db}\n",
                "",
                {"default/b"}});
  return cs;
}

std::vector<Case> limitCases() {
  std::vector<Case> cs;
  cs.push_back(
      {"per-node limit moves on to the next node",
       {dedicated(), tainted("node2", "dedicated", "gpu", TaintEffect::NoSchedule), NodeBuilder("node3").build()},
       {on1("a").build(), on1("b").build(), PodBuilder("c").node("node2").build()},
       "",
       "maxNoOfPodsToEvictPerNode: 1\n",
       {"default/a", "default/c"}});
  cs.push_back(
      {"total limit",
       {dedicated(), tainted("node2", "dedicated", "gpu", TaintEffect::NoSchedule), NodeBuilder("node3").build()},
       {on1("a").build(), PodBuilder("c").node("node2").build()},
       "",
       "maxNoOfPodsToEvictTotal: 1\n",
       {"default/a"}});
  cs.push_back({"total limit 0", {dedicated(), clean()}, {on1("a").build()}, "", "maxNoOfPodsToEvictTotal: 0\n", {}});
  cs.push_back({"PDB refuses",
                {dedicated(), clean()},
                {on1("a").app("web").build()},
                "",
                "",
                {},
                {pdb("web", "default", selectorOf("app", "web"), 0)}});
  cs.push_back(
      {"DaemonSet pod not evicted", {dedicated(), clean()}, {on1("p").owner("DaemonSet", "ds").build()}, "", "", {}});
  // Upstream does not ask whether the pod fits elsewhere unless DefaultEvictor's nodeFit is on.
  cs.push_back({"every other node tainted or unschedulable: still evicted by default",
                {dedicated(), tainted("node2", "dedicated", "gpu", TaintEffect::NoSchedule),
                 NodeBuilder("node3").unschedulable().build()},
                {on1("a").build()},
                "",
                "",
                {"default/a"}});
  cs.push_back({"nodeFit: no other node the pod fits",
                {dedicated(), tainted("node2", "other", "", TaintEffect::NoSchedule),
                 NodeBuilder("node3").unschedulable().build()},
                {on1("a").build()},
                "",
                "",
                {},
                {},
                "      nodeFit: true\n"});
  cs.push_back({"nodeFit: a clean node fits",
                {dedicated(), clean()},
                {on1("a").build()},
                "",
                "",
                {"default/a"},
                {},
                "      nodeFit: true\n"});
  cs.push_back({"lowest name first, nodes in name order",
                {tainted("node2", "x", "", TaintEffect::NoSchedule), tainted("node1", "x", "", TaintEffect::NoSchedule),
                 NodeBuilder("node3").build()},
                {PodBuilder("b").node("node2").build(), PodBuilder("a").node("node2").build(), on1("z").build()},
                "",
                "",
                {"default/z", "default/a", "default/b"}});
  return cs;
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Tolerations, NodeTaintsTest, ::testing::ValuesIn(tolerationCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Args, NodeTaintsTest, ::testing::ValuesIn(argCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Limits, NodeTaintsTest, ::testing::ValuesIn(limitCases()), caseName);

TEST(NodeTaints, ReasonNamesTheTaint) {
  ClusterBuilder b;
  b.add(NodeBuilder("node1").taint("maintenance", "", TaintEffect::NoSchedule).build())
      .add(clean())
      .add(on1("a").build());
  auto out = runPolicy(policyWith(kPlugin, "deschedule"), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(out.reasons[0], "node node1 has taint maintenance:NoSchedule, which the pod does not tolerate");
}

TEST(NodeTaints, DescribeTaint) {
  EXPECT_EQ(plugins::removepodsviolatingnodetaints::describeTaint({"dedicated", "gpu", TaintEffect::NoSchedule}),
            "dedicated=gpu:NoSchedule");
  EXPECT_EQ(plugins::removepodsviolatingnodetaints::describeTaint({"soft", "", TaintEffect::PreferNoSchedule}),
            "soft:PreferNoSchedule");
}

}  // namespace
}  // namespace kdesched::testing
