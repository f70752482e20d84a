#include "pkg/moves/advisor.h"

#include <gtest/gtest.h>

#include "pkg/evictor/evictor.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

const char* kAnti = "RemovePodsViolatingInterPodAntiAffinity";

// Deployments by ReplicaSet name; counts the reads.
class FakeWorkloads : public moves::Workloads {
 public:
  Result<moves::DeploymentFacts> deploymentOf(const std::string& ns, const std::string& rs) override {
    ++reads;
    auto it = byReplicaSet.find(ns + "/" + rs);
    if (it == byReplicaSet.end()) return Status::error("no Deployment for " + rs);
    return it->second;
  }
  std::map<std::string, moves::DeploymentFacts> byReplicaSet;
  int reads = 0;
};

moves::DeploymentFacts deployment(std::string name, std::int32_t replicas = 1) {
  moves::DeploymentFacts d;
  d.ns = "default";
  d.name = std::move(name);
  d.uid = "dep-" + d.name;
  d.resourceVersion = "10";
  d.generation = d.observedGeneration = 1;
  d.replicas = d.statusReplicas = d.updatedReplicas = d.availableReplicas = replicas;
  return d;
}

policy::MovesConfig enabled() {
  policy::MovesConfig c;
  c.enabled = true;
  return c;
}

// The seed story: payment (one replica, PDB minAvailable 1) shares a node with order, whose pods
// it must avoid. Evicting it is refused by the PDB; a move goes through.
struct Story {
  Story() {
    b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build());
    b.add(PodBuilder("order").app("order").node("n1").build());
    b.add(PodBuilder("payment")
              .app("payment")
              .label("pod-template-hash", "abc")
              .owner("ReplicaSet", "payment-abc")
              .node("n1")
              .antiAffinity("app", "order")
              .build());
    b.add(pdb("payment", "default", selectorOf("app", "payment"), 0));  // minAvailable 1 of 1
    workloads.byReplicaSet["default/payment-abc"] = deployment("payment");
  }
  evictor::PlanSink run(evictor::MoveAdvisor* advisor) {
    auto engine = engineFor(policyWith(kAnti, "deschedule"), 100000);
    EXPECT_TRUE(engine.isOk());
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink, nullptr, advisor);
    snap = b.snapshot();
    engine->runCycle(*snap, chain);
    return sink;
  }
  ClusterBuilder b;
  FakeWorkloads workloads;
  cluster::SnapshotPtr snap;
};

TEST(Moves, WithoutMovesThePdbRefusesAsUpstreamDoes) {
  Story s;
  evictor::PlanSink sink = s.run(nullptr);
  EXPECT_TRUE(sink.evictions().empty());
  ASSERT_EQ(sink.refusals().size(), 1u);
  EXPECT_EQ(sink.refusals()[0].result.refusal, framework::Refusal::Pdb);
  EXPECT_EQ(s.workloads.reads, 0);
}

TEST(Moves, ASingleReplicaBehindAPdbMovesInstead) {
  Story s;
  moves::Advisor advisor(enabled(), s.workloads, nullptr);
  evictor::PlanSink sink = s.run(&advisor);
  ASSERT_EQ(sink.evictions().size(), 1u);
  const evictor::Decision& d = sink.evictions()[0];
  ASSERT_TRUE(d.move);
  EXPECT_EQ(d.move->deployment, "payment");
  EXPECT_EQ(d.move->uid, "dep-payment");
  EXPECT_EQ(d.move->resourceVersion, "10");
  EXPECT_EQ(d.move->deadlineSeconds, 600);  // the Deployment's progressDeadlineSeconds
  EXPECT_EQ(d.move->rollout, "rollout restart of Deployment default/payment (1 replica, maxSurge 1, maxUnavailable 0)");
  EXPECT_EQ(d.landing.column(), "n2");
  EXPECT_TRUE(sink.refusals().empty());
}

TEST(Moves, NoMoveSaysWhyInTheRefusal) {
  struct Case {
    const char* name;
    std::function<void(Story&)> edit;
    const char* says;
  };
  const Case cases[] = {
      {"maxSurge 0",
       [](Story& s) {
         auto& d = s.workloads.byReplicaSet["default/payment-abc"];
         d.maxSurge = moves::IntOrPercent::of(0);
         d.maxUnavailable = moves::IntOrPercent::of(1);
       },
       "maxSurge 0"},
      {"a StatefulSet",
       [](Story& s) {
         s.b.add(PodBuilder("payment")
                     .app("payment")
                     .owner("StatefulSet", "payment")
                     .node("n1")
                     .antiAffinity("app", "order")
                     .build());
       },
       "its controller is a StatefulSet"},
      {"a bare ReplicaSet", [](Story& s) { s.workloads.byReplicaSet.clear(); }, "no Deployment for payment-abc"},
      {"mid-rollout", [](Story& s) { s.workloads.byReplicaSet["default/payment-abc"].generation = 2; }, "mid-rollout"},
  };
  for (const Case& c : cases) {
    Story s;
    c.edit(s);
    moves::Advisor advisor(enabled(), s.workloads, nullptr);
    evictor::PlanSink sink = s.run(&advisor);
    EXPECT_TRUE(sink.evictions().empty()) << c.name;
    ASSERT_EQ(sink.refusals().size(), 1u) << c.name;
    EXPECT_EQ(sink.refusals()[0].result.refusal, framework::Refusal::Pdb) << c.name;
    EXPECT_NE(sink.refusals()[0].result.noMove.find(c.says), std::string::npos)
        << c.name << ": " << sink.refusals()[0].result.noMove;
  }
}

// A ReplicaSet with other pods and a PDB budget to spare: an eviction keeps the workload up, so
// moves stay out of it, and the Deployment is not even read.
TEST(Moves, AnEvictionThatKeepsTheWorkloadUpIsLeftAlone) {
  Story s;
  s.b.add(pdb("payment", "default", selectorOf("app", "payment"), 1));
  s.b.add(PodBuilder("payment-2").app("payment").owner("ReplicaSet", "payment-abc").node("n2").build());
  moves::Advisor advisor(enabled(), s.workloads, nullptr);
  evictor::PlanSink sink = s.run(&advisor);
  ASSERT_EQ(sink.evictions().size(), 1u);
  EXPECT_FALSE(sink.evictions()[0].move);
  EXPECT_EQ(s.workloads.reads, 0);
}

TEST(Moves, OutOfScopeOrDisabledMeansUpstreamsPath) {
  for (int variant = 0; variant < 3; ++variant) {
    Story s;
    policy::MovesConfig c = enabled();
    if (variant == 0) c.enabled = false;
    if (variant == 1) c.namespaces = policy::Namespaces{{"other"}, {}};
    if (variant == 2) c.labelSelector = selectorOf("app", "order");
    moves::Advisor advisor(c, s.workloads, nullptr);
    evictor::PlanSink sink = s.run(&advisor);
    EXPECT_TRUE(sink.evictions().empty()) << variant;
    ASSERT_EQ(sink.refusals().size(), 1u) << variant;
    EXPECT_EQ(sink.refusals()[0].result.noMove, "") << variant;
    EXPECT_EQ(s.workloads.reads, 0) << variant;
  }
}

// One move in flight per Deployment: the tracker holds it until its outcome.
TEST(Moves, ADeploymentWithAMoveInFlightIsNotMovedAgain) {
  Story s;
  FakeClock clock;
  moves::MoveTracker tracker(clock, nullptr, nullptr);
  moves::Advisor advisor(enabled(), s.workloads, &tracker);
  evictor::PlanSink first = s.run(&advisor);
  ASSERT_EQ(first.evictions().size(), 1u);
  tracker.evict(first.evictions()[0]);
  evictor::PlanSink second = s.run(&advisor);
  EXPECT_TRUE(second.evictions().empty());
  ASSERT_EQ(second.refusals().size(), 1u);
  EXPECT_NE(second.refusals()[0].result.noMove.find("is in flight"), std::string::npos)
      << second.refusals()[0].result.noMove;
}

}  // namespace
}  // namespace kdesched::testing
