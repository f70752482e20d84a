// RemovePodsHavingTooManyRestarts through the real engine: one named case a line.
#include "pkg/plugins/removepodshavingtoomanyrestarts/removepodshavingtoomanyrestarts.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;

const char* kPlugin = "RemovePodsHavingTooManyRestarts";
const std::string kThreshold5 = "      podRestartThreshold: 5\n";

struct Case {
  std::string name;
  std::vector<PodPtr> pods;
  std::string pluginArgs;  // indented 6
  std::vector<std::string> wantEvicted;
  std::string topLevel = "";
  std::string evictorArgs = "";
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs = {};
};

PodBuilder pod(std::string name, std::string node = "node1") { return PodBuilder(std::move(name)).node(node); }

class TooManyRestartsTest : public ::testing::TestWithParam<Case> {};

TEST_P(TooManyRestartsTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build()).add(NodeBuilder("node2").build());
  for (auto& p : c.pods) b.add(p);
  for (auto& p : c.pdbs) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "deschedule", c.pluginArgs, c.evictorArgs, c.topLevel), *b.snapshot());
  EXPECT_EQ(out.evicted, c.wantEvicted);
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  cs.push_back({"at the threshold: evicted", {pod("a").restarts(5).build()}, kThreshold5, {"default/a"}});
  cs.push_back({"below the threshold", {pod("a").restarts(4).build(), pod("b").build()}, kThreshold5, {}});
  cs.push_back(
      {"restarts of all containers add up", {pod("a").restarts(2).restarts(3).build()}, kThreshold5, {"default/a"}});
  cs.push_back({"init restarts only with includingInitContainers",
                {pod("a").restarts(2).initStatus(3).build()},
                kThreshold5,
                {}});
  cs.push_back({"includingInitContainers",
                {pod("a").restarts(2).initStatus(3).build()},
                kThreshold5 + "      includingInitContainers: true\n",
                {"default/a"}});
  cs.push_back({"ephemeral restarts never count",
                {pod("a").restarts(2).ephemeralStatus(3).build()},
                kThreshold5 + "      includingInitContainers: true\n",
                {}});
  cs.push_back({"most restarts first",
                {pod("few").restarts(5).build(), pod("many").restarts(50).build(), pod("some").restarts(9).build()},
                kThreshold5,
                {"default/many", "default/some", "default/few"}});
  cs.push_back({"all phases: a Succeeded pod counts (as upstream)",
                {pod("done").phase(api::PodPhase::Succeeded).restarts(6).build()},
                kThreshold5,
                {"default/done"}});
  cs.push_back({"states Running: phase",
                {pod("run").restarts(6).build(), pod("pend").phase(api::PodPhase::Pending).restarts(6).build()},
                kThreshold5 + "      states: [Running]\n",
                {"default/run"}});
  cs.push_back({"states CrashLoopBackOff: a waiting reason",
                {pod("crash").restarts(6).waitingReason("CrashLoopBackOff").build(), pod("run").restarts(6).build()},
                kThreshold5 + "      states: [CrashLoopBackOff]\n",
                {"default/crash"}});
  cs.push_back({"states: an init container's waiting reason needs the flag",
                {pod("init").phase(api::PodPhase::Pending).initStatus(6).waitingReason("CrashLoopBackOff").build()},
                kThreshold5 + "      states: [CrashLoopBackOff]\n",
                {}});
  cs.push_back({"states: an init container's waiting reason with the flag",
                {pod("init").phase(api::PodPhase::Pending).initStatus(6).waitingReason("CrashLoopBackOff").build()},
                kThreshold5 + "      states: [CrashLoopBackOff]\n      includingInitContainers: true\n",
                {"default/init"}});
  cs.push_back({"namespaces",
                {pod("a").restarts(6).build(), PodBuilder("b", "batch").node("node1").restarts(6).build()},
                kThreshold5 + "      namespaces: {exclude: [default]}\n",
                {"batch/b"}});
  cs.push_back({"labelSelector",
                {pod("a").app("web").restarts(6).build(), pod("b").app("db").restarts(6).build()},
                kThreshold5 + "      labelSelector: {matchLabels: {app: web}}\n",
                {"default/a"}});
  cs.push_back({"a DaemonSet pod is the evictor's to keep",
                {pod("ds").owner("DaemonSet", "agent").restarts(60).build()},
                kThreshold5,
                {}});
  cs.push_back({"a PDB allowing no disruption holds a running pod",
                {pod("a").app("web").restarts(6).build()},
                kThreshold5,
                {},
                "",
                "",
                {pdb("web", "default", selectorOf("app", "web"), 0)}});
  cs.push_back({"per-node limit takes the most restarted and moves on",
                {pod("a").restarts(6).build(), pod("b").restarts(60).build(), pod("c", "node2").restarts(7).build()},
                kThreshold5,
                {"default/b", "default/c"},
                "maxNoOfPodsToEvictPerNode: 1\n"});
  cs.push_back({"total limit",
                {pod("a").restarts(6).build(), pod("b", "node2").restarts(60).build()},
                kThreshold5,
                {"default/a"},
                "maxNoOfPodsToEvictTotal: 1\n"});
  cs.push_back({"total limit 0", {pod("a").restarts(6).build()}, kThreshold5, {}, "maxNoOfPodsToEvictTotal: 0\n"});
  return cs;
}

INSTANTIATE_TEST_SUITE_P(Table, TooManyRestartsTest, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(TooManyRestarts, ReasonNamesTheRule) {
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build()).add(NodeBuilder("node2").build());
  b.add(pod("crash").restarts(4).waitingReason("CrashLoopBackOff").initStatus(3).build());
  auto out = runPolicy(
      policyWith(kPlugin, "deschedule",
                 kThreshold5 + "      includingInitContainers: true\n      states: [Running, CrashLoopBackOff]\n"),
      *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(out.reasons[0],
            "containers restarted 7 times (init containers included), podRestartThreshold is 5, pod is in state "
            "Running");
  out = runPolicy(policyWith(kPlugin, "deschedule", "      podRestartThreshold: 4\n"), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(out.reasons[0], "containers restarted 4 times, podRestartThreshold is 4");
}

}  // namespace
}  // namespace kdesched::testing
