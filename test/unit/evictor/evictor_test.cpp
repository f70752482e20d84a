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

// Each eviction the chain lets through carries where its pod is expected to land; a refusal none.
TEST(EvictionChain, EvictionsCarryTheirLandingEstimate) {
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build()).add(NodeBuilder("n3").build());
  b.add(PodBuilder("order1").app("order").node("n1").build());
  b.add(PodBuilder("order3").app("order").node("n3").build());
  b.add(PodBuilder("pay1").app("payment").node("n1").antiAffinity("app", "order").build());
  b.add(PodBuilder("pay3").app("payment").node("n3").antiAffinity("app", "order").build());
  b.add(pdb("payment", "default", selectorOf("app", "payment"), 1));
  auto engine = engineFor(policyWith(kAnti, "deschedule"), 100000);
  ASSERT_TRUE(engine.isOk());
  auto snap = b.snapshot();
  evictor::PlanSink sink;
  evictor::EvictionChain chain(engine->limits(), sink);
  engine->runCycle(*snap, chain);
  ASSERT_EQ(sink.evictions().size(), 1u);
  const auto& landing = sink.evictions()[0].landing;
  EXPECT_TRUE(landing.estimated);
  EXPECT_EQ(landing.fits, std::vector<std::string>{"n2"});
  EXPECT_EQ(landing.column(), "n2");
  ASSERT_EQ(sink.refusals().size(), 1u);
  EXPECT_FALSE(sink.refusals()[0].wanted.landing.estimated);
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

TEST(EvictionChain, AFilterRefusalNamesTheFilterAndKeepsItsReasonWhole) {
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").unschedulable().build());
  b.add(PodBuilder("order").app("order").node("n1").build());
  b.add(PodBuilder("payment").app("payment").node("n1").antiAffinity("app", "order").build());
  // nodeFit: n2 is unschedulable, so payment fits nowhere else; the reason itself holds ": ".
  auto out = runPolicy(policyWith(kAnti, "deschedule", "", "          nodeFit: true\n"), *b.snapshot());
  EXPECT_TRUE(out.evicted.empty());
  ASSERT_EQ(out.refused.size(), 1u);
  EXPECT_EQ(out.refused[0], "default/payment by DefaultEvictor");
  EXPECT_EQ(out.refusedDetails[0], "nodeFit: the pod fits no other ready node");
}

// Records the order of the calls it gets; refuses pods named in `refuse`.
struct RecordingGate : evictor::EvictionGate {
  RecordingGate(std::string name, std::vector<std::string>& log, std::string refuse = "")
      : name(std::move(name)), log(log), refuse(std::move(refuse)) {}
  framework::EvictResult admit(const evictor::Decision& d) override {
    log.push_back(name + " admit " + d.pod->name);
    if (d.pod->name == refuse) return framework::EvictResult::refused(framework::Refusal::AntiFlapping, name, "no");
    return {};
  }
  void evicted(const evictor::Decision& d) override { log.push_back(name + " evicted " + d.pod->name); }
  std::string name;
  std::vector<std::string>& log;
  std::string refuse;
};

TEST(GateChain, EachGateMustAdmitInOrderAndAllHearOfEvictions) {
  std::vector<std::string> log;
  RecordingGate first("first", log, "x"), second("second", log, "y");
  evictor::GateChain chain({&first, nullptr, &second});
  auto x = PodBuilder("x").build(), y = PodBuilder("y").build(), z = PodBuilder("z").build();
  auto decide = [](const api::Pod& p) { return evictor::Decision{&p, "n1", "P", "default", "why"}; };
  EXPECT_EQ(chain.admit(decide(*x)).by, "first");
  EXPECT_EQ(chain.admit(decide(*y)).by, "second");
  EXPECT_EQ(chain.admit(decide(*z)).refusal, framework::Refusal::None);
  chain.evicted(decide(*z));
  EXPECT_EQ(log, (std::vector<std::string>{"first admit x", "first admit y", "second admit y", "first admit z",
                                           "second admit z", "first evicted z", "second evicted z"}));
}

}  // namespace
}  // namespace kdesched::testing
