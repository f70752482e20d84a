// RemoveFailedPods through the real engine: one named case a line.
#include "pkg/plugins/removefailedpods/removefailedpods.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;

const char* kPlugin = "RemoveFailedPods";
constexpr api::Timestamp kNow = 100000;  // the harness's pinned wall clock

struct Case {
  std::string name;
  std::vector<PodPtr> pods;
  std::string pluginArgs;  // indented 6
  std::vector<std::string> wantEvicted;
  std::string topLevel = "";
  std::string evictorArgs = "";
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs = {};
};

// A pod on node1 that failed long ago (created at 1000, the clock reads 100000).
PodBuilder failed(std::string name, std::string node = "node1") {
  return PodBuilder(std::move(name)).node(node).phase(api::PodPhase::Failed).notReady();
}

class RemoveFailedPodsTest : public ::testing::TestWithParam<Case> {};

TEST_P(RemoveFailedPodsTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build()).add(NodeBuilder("node2").build());
  for (auto& p : c.pods) b.add(p);
  for (auto& p : c.pdbs) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "deschedule", c.pluginArgs, c.evictorArgs, c.topLevel), *b.snapshot());
  EXPECT_EQ(out.evicted, c.wantEvicted);
}

std::vector<Case> cases() {
  const std::string oom = "      reasons: [OOMKilled]\n";
  std::vector<Case> cs;
  cs.push_back({"failed and old: evicted", {failed("f").build()}, "", {"default/f"}});
  cs.push_back({"no args at all: the defaults apply", {failed("f").build()}, "", {"default/f"}});
  cs.push_back({"running, succeeded, pending: only Failed counts",
                {PodBuilder("r").node("node1").restarts(9).terminatedReason("OOMKilled", 137).build(),
                 PodBuilder("s").node("node1").phase(api::PodPhase::Succeeded).build(),
                 PodBuilder("p").node("node1").phase(api::PodPhase::Pending).build()},
                "",
                {}});
  cs.push_back({"younger than the default 3600 s", {failed("f").created(kNow - 3599).build()}, "", {}});
  cs.push_back({"exactly minPodLifetimeSeconds old", {failed("f").created(kNow - 3600).build()}, "", {"default/f"}});
  cs.push_back({"minPodLifetimeSeconds 0 keeps no age",
                {failed("f").created(kNow - 1).build()},
                "      minPodLifetimeSeconds: 0\n",
                {"default/f"}});
  cs.push_back({"minPodLifetimeSeconds null is the default",
                {failed("f").created(kNow - 600).build()},
                "      minPodLifetimeSeconds: null\n",
                {}});
  // kdesched only: upstream's unsigned age makes a pod created in the future old.
  cs.push_back({"created in the future is not old",
                {failed("f").created(kNow + 600).build()},
                "      minPodLifetimeSeconds: 60\n",
                {}});
  cs.push_back(
      {"no creationTimestamp is old, as upstream", {failed("f").noCreationTimestamp().build()}, "", {"default/f"}});
  cs.push_back({"excludeOwnerKinds skips a listed kind",
                {failed("job").owner("Job", "nightly").build(), failed("rs").build()},
                "      excludeOwnerKinds: [Job]\n",
                {"default/rs"}});
  cs.push_back({"reasons: a terminated reason",
                {failed("oom").restarts(0).terminatedReason("OOMKilled", 137).build(),
                 failed("err").restarts(0).terminatedReason("Error", 1).build()},
                oom,
                {"default/oom"}});
  cs.push_back({"reasons: a waiting reason",
                {failed("w").restarts(3).waitingReason("CrashLoopBackOff").build()},
                "      reasons: [CrashLoopBackOff]\n",
                {"default/w"}});
  cs.push_back({"reasons: status.reason",
                {failed("e").statusReason("Evicted").build()},
                "      reasons: [Evicted]\n",
                {"default/e"}});
  cs.push_back({"reasons: none at all does not match", {failed("f").build()}, oom, {}});
  cs.push_back({"reasons: an init container's only with includingInitContainers",
                {failed("i").initStatus().terminatedReason("OOMKilled", 137).build()},
                oom,
                {}});
  cs.push_back({"reasons: includingInitContainers",
                {failed("i").initStatus().terminatedReason("OOMKilled", 137).build()},
                oom + "      includingInitContainers: true\n",
                {"default/i"}});
  cs.push_back({"reasons: an ephemeral container never counts",
                {failed("e").ephemeralStatus().terminatedReason("OOMKilled", 137).build()},
                oom + "      includingInitContainers: true\n",
                {}});
  cs.push_back({"exitCodes: match and mismatch",
                {failed("a").restarts(0).terminatedReason("Error", 137).build(),
                 failed("b").restarts(0).terminatedReason("Error", 1).build()},
                "      exitCodes: [137]\n",
                {"default/a"}});
  cs.push_back({"exitCodes: 0 of a terminated init container with the flag",
                {failed("a").initStatus().terminatedReason("Completed", 0).build(), failed("b").build()},
                "      exitCodes: [0]\n      includingInitContainers: true\n",
                {"default/a"}});
  cs.push_back({"reasons and exitCodes must both match",
                {failed("a").restarts(0).terminatedReason("OOMKilled", 137).build(),
                 failed("b").restarts(0).terminatedReason("OOMKilled", 1).build()},
                oom + "      exitCodes: [137]\n",
                {"default/a"}});
  cs.push_back({"namespaces",
                {failed("a").build(), PodBuilder("b", "jobs").node("node1").phase(api::PodPhase::Failed).build()},
                "      namespaces: {include: [jobs]}\n",
                {"jobs/b"}});
  cs.push_back({"labelSelector",
                {failed("a").app("web").build(), failed("b").app("db").build()},
                "      labelSelector: {matchLabels: {app: db}}\n",
                {"default/b"}});
  cs.push_back({"a bare failed pod stays unless evictFailedBarePods", {failed("bare").bare().build()}, "", {}});
  cs.push_back({"evictFailedBarePods",
                {failed("bare").bare().build()},
                "",
                {"default/bare"},
                "",
                "      evictFailedBarePods: true\n"});
  // The API server does not check PodDisruptionBudgets for terminal pods.
  cs.push_back({"a PDB allowing no disruption does not hold a failed pod",
                {failed("f").app("web").build()},
                "",
                {"default/f"},
                "",
                "",
                {pdb("web", "default", selectorOf("app", "web"), 0)}});
  cs.push_back({"per-node limit moves on to the next node",
                {failed("a").build(), failed("b").build(), failed("c", "node2").build()},
                "",
                {"default/a", "default/c"},
                "maxNoOfPodsToEvictPerNode: 1\n"});
  cs.push_back({"total limit",
                {failed("a").build(), failed("b", "node2").build()},
                "",
                {"default/a"},
                "maxNoOfPodsToEvictTotal: 1\n"});
  cs.push_back({"total limit 0", {failed("a").build()}, "", {}, "maxNoOfPodsToEvictTotal: 0\n"});
  return cs;
}

INSTANTIATE_TEST_SUITE_P(Table, RemoveFailedPodsTest, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(RemoveFailedPods, ReasonNamesTheRule) {
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build()).add(NodeBuilder("node2").build());
  b.add(failed("oom").created(kNow - 7200).restarts(2).terminatedReason("OOMKilled", 137).build());
  b.add(failed("plain").created(kNow - 4000).build());
  auto out = runPolicy(policyWith(kPlugin, "deschedule", "      reasons: [OOMKilled]\n"), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(out.reasons[0],
            "pod failed with reason OOMKilled and exit code 137, created 2h0m ago (RemoveFailedPods: "
            "minPodLifetimeSeconds 3600, reason listed in reasons)");
  out = runPolicy(policyWith(kPlugin, "deschedule", ""), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 2u);
  EXPECT_EQ(out.reasons[1], "pod failed, created 1h6m ago (RemoveFailedPods: minPodLifetimeSeconds 3600)");
}

}  // namespace
}  // namespace kdesched::testing
