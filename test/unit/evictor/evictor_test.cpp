#include "pkg/evictor/evictor.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

const char* kAnti = "RemovePodsViolatingInterPodAntiAffinity";

// Two profiles that would both evict the same pod: the second sees it gone.
TEST(EvictionChain, LaterProfilesSeeEarlierEvictions) {
  std::string policy =
      "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n"
      "- name: first\n  pluginConfig:\n  - name: RemovePodsViolatingInterPodAntiAffinity\n"
      "  plugins:\n    deschedule:\n      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n"
      "- name: second\n  pluginConfig:\n  - name: RemovePodsViolatingInterPodAntiAffinity\n"
      "  plugins:\n    deschedule:\n      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n";
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build());
  b.add(PodBuilder("order").app("order").node("n1").build());
  b.add(PodBuilder("payment").app("payment").node("n1").antiAffinity("app", "order").build());
  auto out = runPolicy(policy, *b.snapshot());
  EXPECT_EQ(out.evicted, std::vector<std::string>{"default/payment"});
  ASSERT_EQ(out.cycle.runs.size(), 2u);
  EXPECT_EQ(out.cycle.runs[0].profile, "first");
  EXPECT_EQ(out.cycle.runs[1].profile, "second");
}

TEST(EvictionChain, PdbBudgetIsSharedAcrossEvictions) {
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build());
  b.add(PodBuilder("order1").app("order").node("n1").build());
  b.add(PodBuilder("order2").app("order").node("n2").build());
  b.add(PodBuilder("pay1").app("payment").node("n1").antiAffinity("app", "order").build());
  b.add(PodBuilder("pay2").app("payment").node("n2").antiAffinity("app", "order").build());
  b.add(pdb("payment", "default", selectorOf("app", "payment"), 1));
  auto out = runPolicy(policyWith(kAnti, "deschedule"), *b.snapshot());
  EXPECT_EQ(out.evicted, std::vector<std::string>{"default/pay1"});
  ASSERT_EQ(out.refused.size(), 1u);
  EXPECT_EQ(out.refused[0], "default/pay2 by PodDisruptionBudget default/payment");
}

TEST(EvictionChain, FewerThanTwoReadyNodesSkipsTheCycle) {
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").notReady().build());
  b.add(PodBuilder("order").app("order").node("n1").build());
  b.add(PodBuilder("payment").app("payment").node("n1").antiAffinity("app", "order").build());
  auto out = runPolicy(policyWith(kAnti, "deschedule"), *b.snapshot());
  EXPECT_TRUE(out.cycle.skipped);
  EXPECT_TRUE(out.evicted.empty());
}

TEST(EvictionChain, PolicyNodeSelectorRestrictsNodes) {
  ClusterBuilder b;
  b.add(NodeBuilder("n1").label("pool", "a").build()).add(NodeBuilder("n2").label("pool", "a").build());
  b.add(NodeBuilder("n3").label("pool", "b").build());
  b.add(PodBuilder("order").app("order").node("n3").build());
  b.add(PodBuilder("payment").app("payment").node("n3").antiAffinity("app", "order").build());
  auto out = runPolicy(policyWith(kAnti, "deschedule", "", "", "nodeSelector: pool=a\n"), *b.snapshot());
  EXPECT_TRUE(out.evicted.empty());
  auto all = runPolicy(policyWith(kAnti, "deschedule"), *b.snapshot());
  EXPECT_EQ(all.evicted, std::vector<std::string>{"default/payment"});
}

TEST(EvictionChain, GateCanRefuse) {
  struct DenyAll : evictor::EvictionGate {
    framework::EvictResult admit(const evictor::Decision&) override {
      return framework::EvictResult::refused(framework::Refusal::AntiFlapping, "cooldown", "owner evicted recently");
    }
    void evicted(const evictor::Decision&) override {}
  } gate;
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build());
  b.add(PodBuilder("order").app("order").node("n1").build());
  b.add(PodBuilder("payment").app("payment").node("n1").antiAffinity("app", "order").build());
  auto snap = b.snapshot();
  auto engine = engineFor(policyWith(kAnti, "deschedule"));
  ASSERT_TRUE(engine.isOk());
  evictor::PlanSink sink;
  evictor::EvictionChain chain(engine->limits(), sink, &gate);
  engine->runCycle(*snap, chain);
  EXPECT_TRUE(sink.evictions().empty());
  ASSERT_EQ(sink.refusals().size(), 1u);
  EXPECT_EQ(sink.refusals()[0].result.refusal, framework::Refusal::AntiFlapping);
}

}  // namespace
}  // namespace kdesched::testing
