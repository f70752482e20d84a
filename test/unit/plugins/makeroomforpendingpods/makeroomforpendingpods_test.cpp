// MakeRoomForPendingPods through the real engine and plan sink: which pending pods it helps, the
// fewest pods it moves and where from, what blocks a move (priority, PDB, nowhere to go, filters),
// pending pods competing for one slot, and what `plan --explain` says of each pending pod.
#include "pkg/plugins/makeroomforpendingpods/makeroomforpendingpods.h"

#include <gtest/gtest.h>

#include <functional>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;

const char* kPlugin = "MakeRoomForPendingPods";
constexpr api::Timestamp kNow = 100000;  // the harness's pinned wall clock

// A pod the scheduler gave up on `pendingFor` seconds ago, requesting `cpu` millicores.
PodBuilder pending(std::string name, std::int64_t cpu, api::Timestamp pendingFor = 300) {
  return PodBuilder(std::move(name))
      .phase(api::PodPhase::Pending)
      .notReady()
      .noStartTime()
      .created(kNow - pendingFor - 5)
      .requests(cpu, 128 * kMi)
      .condition("PodScheduled", "False", "Unschedulable", kNow - pendingFor);
}

// A running pod on `node`, started `age` seconds ago.
PodBuilder running(std::string name, std::string node, std::int64_t cpu, api::Timestamp age = 3600) {
  return PodBuilder(name).node(node).app(name).requests(cpu, 128 * kMi).startTime(kNow - age).created(kNow - age);
}

// The usual layout: node1 and node2 (pool=main) have 500m free each, node3 (no pool) is empty.
// A pending pod of 1500m for pool=main lacks 1000m on either: moving a (1000m, the youngest) off
// node1, to node3, makes room.
void fragmented(ClusterBuilder& b) {
  b.add(NodeBuilder("node1").label("pool", "main").build());
  b.add(NodeBuilder("node2").label("pool", "main").build());
  b.add(NodeBuilder("node3").build());
  b.add(running("a", "node1", 1000, 600).build());
  b.add(running("w1", "node1", 2500).build());
  b.add(running("b", "node2", 1000, 900).build());
  b.add(running("w2", "node2", 2500).build());
}

struct Case {
  std::string name;
  std::function<void(ClusterBuilder&)> cluster;
  std::vector<PodPtr> pods;
  std::vector<std::string> wantEvicted;
  std::string wantExplain = "";  // a part of the last explain row of default/big
  std::string pluginArgs = "";
  std::string topLevel = "";
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class MakeRoomTest : public ::testing::TestWithParam<Case> {};

TEST_P(MakeRoomTest, Moves) {
  const Case& c = GetParam();
  ClusterBuilder b;
  c.cluster(b);
  for (const auto& p : c.pods) b.add(p);
  auto engine = engineFor(policyWith(kPlugin, "deschedule", c.pluginArgs, "", c.topLevel), kNow);
  ASSERT_TRUE(engine.isOk()) << engine.error();
  evictor::PlanSink sink;
  evictor::EvictionChain chain(engine->limits(), sink);
  framework::Explainer explain({"default/big"});
  framework::CycleScope scope;
  scope.explain = &explain;
  engine->runCycle(*b.snapshot(), chain, nullptr, scope);
  std::vector<std::string> evicted;
  for (const auto& d : sink.evictions()) evicted.push_back(d.pod->key());
  EXPECT_EQ(evicted, c.wantEvicted);
  if (!sink.evictions().empty()) {
    EXPECT_NE(sink.evictions()[0].reason.find("to make room for pending pod default/"), std::string::npos)
        << sink.evictions()[0].reason;
  }
  if (!c.wantExplain.empty()) {
    ASSERT_EQ(explain.asked().size(), 1u);
    const auto& steps = explain.asked()[0].steps;
    ASSERT_FALSE(steps.empty()) << "no explain row for default/big";
    const std::string row = std::string(framework::toString(steps.back().outcome)) + ": " + steps.back().why;
    EXPECT_NE(row.find(c.wantExplain), std::string::npos) << row;
    // The plugin answers for the unbound pod: no "not bound to a node" row before its own.
    EXPECT_EQ(steps.front().plugin, kPlugin) << steps.front().why;
  }
}

const api::Toleration kTolerateDedicated{"dedicated", api::TolerationOp::Exists, "", api::TaintEffect::NoSchedule, {}};
const api::Toleration kTolerateAll{"", api::TolerationOp::Exists, "", api::TaintEffect::None, {}};

std::vector<Case> cases() {
  std::vector<Case> cs;
  cs.push_back({.name = "cpu fragmentation: the youngest fitting pod moves to the node with room",
                .cluster = fragmented,
                .pods = {pending("big", 1500).nodeSelector("pool", "main").build()},
                .wantEvicted = {"default/a"},
                .wantExplain = "helped: made room on node node1 by evicting default/a"});
  cs.push_back({.name = "memory fragmentation: the pod that frees enough memory moves",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").allocatable(8000, 4 * kGi).build());
                      b.add(NodeBuilder("node2").allocatable(8000, 4 * kGi).build());
                      b.add(running("m1", "node1", 100).requests(100, 3 * kGi).build());
                      b.add(running("s1", "node1", 100, 60).requests(100, 256 * kMi).build());
                      b.add(running("m2", "node2", 100).requests(100, 3 * kGi).build());
                    },
                .pods = {pending("big", 100).requests(100, 2 * kGi).build()},
                // node1 lacks 1280Mi: s1 frees too little, and m1 (3Gi) fits nowhere else; node2
                // lacks 1Gi, and m2 (3Gi) does not fit node1's 768Mi.
                .wantEvicted = {},
                .wantExplain = "nowhere else to go"});
  cs.push_back({.name = "memory fragmentation: a 1Gi pod moves to make 2Gi",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").allocatable(8000, 4 * kGi).build());
                      b.add(NodeBuilder("node2").allocatable(8000, 4 * kGi).build());
                      b.add(running("m1", "node1", 100).requests(100, 3 * kGi).build());
                      b.add(running("g2", "node2", 100).requests(100, 1 * kGi).build());
                      b.add(running("h2", "node2", 100).requests(100, 1536 * kMi).build());
                    },
                .pods = {pending("big", 100).requests(100, 2 * kGi).build()},
                // node1 has 1Gi free, node2 1.5Gi; g2 (1Gi) off node2 leaves 2.5Gi there and
                // fits node1's 1Gi.
                .wantEvicted = {"default/g2"}});
  cs.push_back({.name = "pod count: a full node frees a slot by moving a pod to a node the pending pod may not use",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").allocatable(4000, 8 * kGi, 2).build());
                      b.add(NodeBuilder("node2")
                                .allocatable(4000, 8 * kGi, 10)
                                .taint("dedicated", "batch", api::TaintEffect::NoSchedule)
                                .build());
                      b.add(running("p1", "node1", 100).toleration(kTolerateDedicated).build());
                      b.add(running("p2", "node1", 100, 60).toleration(kTolerateDedicated).build());
                    },
                .pods = {pending("big", 100).build()},
                .wantEvicted = {"default/p2"}});
  cs.push_back({.name = "node affinity: only node2 can ever host it, so the move is there though node1 is emptier",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").build());
                      b.add(NodeBuilder("node2").label("disk", "ssd").build());
                      b.add(NodeBuilder("node3").build());
                      b.add(running("n1", "node1", 2000, 60).build());
                      b.add(running("s1", "node2", 3000).build());
                      b.add(running("s2", "node2", 500, 600).build());
                    },
                .pods = {pending("big", 1000).requiredNodeAffinity("disk", api::NodeSelectorOp::In, {"ssd"}).build()},
                .wantEvicted = {"default/s2"}});
  cs.push_back({.name = "taints: the only node it tolerates is the one made room on",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").taint("dedicated", "gpu", api::TaintEffect::NoSchedule).build());
                      b.add(NodeBuilder("node2").taint("spare", "yes", api::TaintEffect::NoSchedule).build());
                      b.add(running("t1", "node1", 3500).toleration(kTolerateAll).build());
                      b.add(running("t2", "node1", 400, 60).toleration(kTolerateAll).build());
                    },
                // node2 is empty but its taint is not tolerated; node1 lacks 500m: only t1 frees
                // enough, and it tolerates node2.
                .pods = {pending("big", 600).toleration(kTolerateDedicated).build()},
                .wantEvicted = {"default/t1"},
                .wantExplain = "helped: made room on node node1"});
  return cs;
}

// PDBs, alone and for a set.
std::vector<Case> budgetCases() {
  std::vector<Case> cs;
  const PodPtr big = pending("big", 1500).nodeSelector("pool", "main").build();
  cs.push_back({.name = "a PDB with no budget on the first choice: the next set moves",
                .cluster =
                    [](ClusterBuilder& b) {
                      fragmented(b);
                      b.add(pdb("a", "default", selectorOf("app", "a"), 0));
                    },
                .pods = {big},
                .wantEvicted = {"default/b"}});
  cs.push_back({.name = "a PDB with no budget on every movable pod: nothing moves, the PDB is named",
                .cluster =
                    [](ClusterBuilder& b) {
                      fragmented(b);
                      api::LabelSelector any;
                      any.matchExpressions.push_back({"app", api::LabelSelectorOp::Exists, {}});
                      b.add(pdb("all", "default", any, 0));
                    },
                .pods = {big},
                .wantEvicted = {},
                .wantExplain = "PodDisruptionBudget default/all"});
  cs.push_back({.name = "two pods under one PDB that allows one: a set needing both is refused",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").build());
                      b.add(running("x1", "node1", 1000).label("tier", "x").build());
                      b.add(running("x2", "node1", 1000).label("tier", "x").build());
                      b.add(running("w1", "node1", 1800).priority(100).build());
                      b.add(pdb("x", "default", selectorOf("tier", "x"), 1));
                    },
                // node1 has 200m free; 1500m needs both x pods gone, and the PDB allows one.
                .pods = {big},
                .wantEvicted = {},
                .wantExplain = "PodDisruptionBudget default/x"});
  return cs;
}

// Priority, nowhere to go, filters, the move count.
std::vector<Case> priorityAndRoomCases() {
  std::vector<Case> cs;
  const PodPtr big = pending("big", 1500).nodeSelector("pool", "main").build();
  cs.push_back({.name = "higher-priority pods in the way are never moved",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").build());
                      b.add(running("hi", "node1", 3500).priority(1000).build());
                    },
                .pods = {big},
                .wantEvicted = {},
                .wantExplain = "1 node: higher-priority pods in the way"});
  cs.push_back({.name = "a higher-priority first choice is passed over for an equal-priority one",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").label("pool", "main").build());
                      b.add(NodeBuilder("node3").build());
                      b.add(running("a", "node1", 1000, 60).priority(10).build());
                      b.add(running("w1", "node1", 2500).build());
                      b.add(running("b", "node2", 1000, 900).build());
                      b.add(running("w2", "node2", 2500).build());
                    },
                .pods = {big},
                .wantEvicted = {"default/b"}});
  cs.push_back({.name = "blockers with nowhere else to go are not moved",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").label("pool", "main").build());
                      b.add(running("a", "node1", 1000, 600).build());
                      b.add(running("w1", "node1", 2500).build());
                      b.add(running("b", "node2", 1000, 900).build());
                      b.add(running("w2", "node2", 2500).build());
                    },
                // Moving a frees node1, but a (1000m) then needs 1000m elsewhere: node2 has 500m.
                .pods = {big},
                .wantEvicted = {},
                .wantExplain = "nowhere else to go for default/"});
  cs.push_back({.name = "pods the evictor keeps (no owner) are not moved",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").build());
                      b.add(running("bare", "node1", 3000).bare().build());
                    },
                .pods = {big},
                .wantEvicted = {},
                .wantExplain = "pods the evictor's filters keep in the way"});
  cs.push_back({.name = "more moves than maxMovesPerPod are not made",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").build());
                      for (const char* n : {"s1", "s2", "s3", "s4"}) b.add(running(n, "node1", 900).build());
                    },
                // node1 has 400m free: 1500m needs two of the 900m pods gone; one is allowed.
                .pods = {big},
                .wantEvicted = {},
                .wantExplain = "needs more than maxMovesPerPod (1) moves",
                .pluginArgs = "      maxMovesPerPod: 1\n"});
  cs.push_back({.name = "two moved pods that fit another node only one at a time are not moved",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").build());
                      for (const char* n : {"s1", "s2", "s3", "s4"}) b.add(running(n, "node1", 900).build());
                      b.add(running("w2", "node2", 2900).priority(1000).build());
                    },
                // Two 900m pods must leave node1, and node2 has 1100m: room for one of them.
                .pods = {big},
                .wantEvicted = {},
                .wantExplain = "nowhere else to go for default/s2"});
  cs.push_back({.name = "two moves when two are needed and allowed",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").build());
                      for (const char* n : {"s1", "s2", "s3", "s4"}) b.add(running(n, "node1", 900).build());
                    },
                .pods = {big},
                .wantEvicted = {"default/s1", "default/s2"}});
  return cs;
}

std::vector<Case> choiceCases() {
  std::vector<Case> cs;
  cs.push_back({.name = "a scale-up's replicas: after one is helped, the next gets its own search",
                .cluster = fragmented,
                .pods = {pending("big", 1500).nodeSelector("pool", "main").owner("ReplicaSet", "scale").build(),
                         pending("big-2", 1500).nodeSelector("pool", "main").owner("ReplicaSet", "scale").build()},
                .wantEvicted = {"default/a", "default/b"},
                .wantExplain = "helped: made room on node node1 by evicting default/a"});
  cs.push_back({.name = "one controller's pending pods that differ do not share an answer",
                .cluster = fragmented,
                .pods = {pending("big", 5000).nodeSelector("pool", "main").owner("ReplicaSet", "scale").build(),
                         pending("big-2", 1500).nodeSelector("pool", "main").owner("ReplicaSet", "scale").build()},
                .wantEvicted = {"default/a"},
                .wantExplain = "larger than the node's allocatable"});
  cs.push_back({.name = "two pending pods compete for one freed slot: the higher priority gets it",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").build());
                      b.add(running("a", "node1", 1000).build());
                      b.add(running("w1", "node1", 2500).priority(1000).build());
                    },
                .pods = {pending("big", 1500).nodeSelector("pool", "main").build(),
                         pending("vip", 1500, 200).nodeSelector("pool", "main").priority(100).build()},
                .wantEvicted = {"default/a"},
                .wantExplain = "higher-priority pods in the way"});
  cs.push_back({.name = "two pending pods of one priority: the older gets the slot",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").build());
                      b.add(running("a", "node1", 1000).build());
                      b.add(running("w1", "node1", 2500).priority(1000).build());
                    },
                .pods = {pending("big", 1500, 900).nodeSelector("pool", "main").build(),
                         pending("late", 1500, 200).nodeSelector("pool", "main").build()},
                .wantEvicted = {"default/a"},
                .wantExplain = "helped: made room on node node1"});
  cs.push_back({.name = "a gated pod is not helped",
                .cluster = fragmented,
                .pods = {pending("big", 1500).nodeSelector("pool", "main").gated().build()},
                .wantEvicted = {},
                .wantExplain = "schedulingGates"});
  cs.push_back({.name = "a nominated pod is left to preemption",
                .cluster = fragmented,
                .pods = {pending("big", 1500).nodeSelector("pool", "main").nominated("node2").build()},
                .wantEvicted = {},
                .wantExplain = "nominated node node2"});
  cs.push_back({.name = "a pod pending less than minPendingSeconds is not helped yet",
                .cluster = fragmented,
                .pods = {pending("big", 1500, 59).nodeSelector("pool", "main").build()},
                .wantEvicted = {},
                .wantExplain = "Unschedulable for 59s, minPendingSeconds is 60"});
  cs.push_back({.name = "minPendingSeconds 0 helps at once",
                .cluster = fragmented,
                .pods = {pending("big", 1500, 0).nodeSelector("pool", "main").build()},
                .wantEvicted = {"default/a"},
                .pluginArgs = "      minPendingSeconds: 0\n"});
  cs.push_back({.name = "a pod below minPriority is not helped",
                .cluster = fragmented,
                .pods = {pending("big", 1500).nodeSelector("pool", "main").build()},
                .wantEvicted = {},
                .wantExplain = "below minPriority 10",
                .pluginArgs = "      minPriority: 10\n"});
  cs.push_back({.name = "a pod outside the namespaces is not helped",
                .cluster = fragmented,
                .pods = {pending("big", 1500).nodeSelector("pool", "main").build()},
                .wantEvicted = {},
                .pluginArgs = "      namespaces: {include: [shop]}\n"});
  cs.push_back({.name = "a pod that fits already is not a capacity problem",
                .cluster = fragmented,
                .pods = {pending("big", 1500).build()},
                .wantEvicted = {},
                .wantExplain = "fits node node3 already"});
  cs.push_back({.name = "a pod the scheduler has not given up on is not helped",
                .cluster = fragmented,
                .pods = {PodBuilder("big").phase(api::PodPhase::Pending).noStartTime().requests(1500, kMi).build()},
                .wantEvicted = {},
                .wantExplain = "no PodScheduled=False condition"});
  cs.push_back({.name = "the total limit leaves a two-move set alone rather than half-done",
                .cluster =
                    [](ClusterBuilder& b) {
                      b.add(NodeBuilder("node1").label("pool", "main").build());
                      b.add(NodeBuilder("node2").build());
                      for (const char* n : {"s1", "s2", "s3", "s4"}) b.add(running(n, "node1", 900).build());
                    },
                .pods = {pending("big", 1500).nodeSelector("pool", "main").build()},
                .wantEvicted = {},
                .wantExplain = "maxNoOfPodsToEvictTotal",
                .topLevel = "maxNoOfPodsToEvictTotal: 1\n"});
  return cs;
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  std::string n;
  for (char ch : info.param.name) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Budgets, MakeRoomTest, ::testing::ValuesIn(budgetCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Blockers, MakeRoomTest, ::testing::ValuesIn(priorityAndRoomCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Choices, MakeRoomTest, ::testing::ValuesIn(choiceCases()), caseName);

// Under `compat: upstream` the plugin would make decisions upstream never makes: refused by name.
TEST(MakeRoomPolicyTest, CompatUpstreamRefusesThePlugin) {
  auto engine = engineFor(policyWith(kPlugin, "deschedule", "", "", "kdesched: {compat: upstream}\n"), kNow);
  ASSERT_FALSE(engine.isOk());
  EXPECT_NE(engine.error().find("profiles[0].plugins.deschedule.enabled[0]: plugin \"MakeRoomForPendingPods\" is "
                                "kdesched-only"),
            std::string::npos)
      << engine.error();
  // One switch back to upstream is not `compat: upstream`: the plugin stays.
  EXPECT_TRUE(
      engineFor(policyWith(kPlugin, "deschedule", "", "", "kdesched: {compat: {cumulativeFit: upstream}}\n"), kNow)
          .isOk());
}

// Explain on a pending pod when the plugin is not in the policy keeps its old answer.
TEST(MakeRoomPolicyTest, WithoutThePluginAnUnboundPodIsNotConsidered) {
  ClusterBuilder b;
  fragmented(b);
  b.add(pending("big", 1500).build());
  auto engine = engineFor(policyWith("PodLifeTime", "deschedule", "      maxPodLifeTimeSeconds: 1\n"), kNow);
  ASSERT_TRUE(engine.isOk()) << engine.error();
  evictor::PlanSink sink;
  evictor::EvictionChain chain(engine->limits(), sink);
  framework::Explainer explain({"default/big"});
  framework::CycleScope scope;
  scope.explain = &explain;
  engine->runCycle(*b.snapshot(), chain, nullptr, scope);
  ASSERT_EQ(explain.asked()[0].steps.size(), 1u);
  EXPECT_EQ(explain.asked()[0].steps[0].why, "no plugin considered it: it is not bound to a node");
}

// A scoped run (the deadline queue's, naming a pending pod) helps that pod, moving pods outside
// the scope; one naming other pods helps none.
TEST(MakeRoomPolicyTest, AScopedRunHelpsThePendingPodsItNames) {
  ClusterBuilder b;
  fragmented(b);
  b.add(pending("big", 1500).nodeSelector("pool", "main").build());
  auto engine = engineFor(policyWith(kPlugin, "deschedule"), kNow);
  ASSERT_TRUE(engine.isOk()) << engine.error();
  auto snapshot = b.snapshot();
  for (const auto& [scopePods, want] :
       std::vector<std::pair<std::shared_ptr<const api::PodNames>, std::vector<std::string>>>{
           {podNames({"default/big"}), {"default/a"}}, {podNames({"default/w1"}), {}}}) {
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink);
    framework::CycleScope scope;
    scope.pods = scopePods;
    scope.plugins = {kPlugin};
    engine->runCycle(*snapshot, chain, nullptr, scope);
    std::vector<std::string> evicted;
    for (const auto& d : sink.evictions()) evicted.push_back(d.pod->key());
    EXPECT_EQ(evicted, want) << sortedKeys(*scopePods)[0];
  }
}

INSTANTIATE_TEST_SUITE_P(Fragmentation, MakeRoomTest, ::testing::ValuesIn(cases()), caseName);

}  // namespace
}  // namespace kdesched::testing
