// Per-owner pacing in a budget (maxUnavailablePerOwner, minIntervalPerOwner), through the real
// engine and chain with a fake clock, as budget_gate_test.cpp does for the budget counts.
#include <gtest/gtest.h>

#include "pkg/evictor/budget_gate.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

const char* kAnti = "RemovePodsViolatingInterPodAntiAffinity";

// Deployment `web` in `default`: `violating` pods, each on its own node next to an order pod its
// anti-affinity forbids (each wanted evicted), plus `unready` not-Ready and `terminating`
// terminating pods on a quiet node (never wanted). Pods of ReplicaSet web-<hash>, labelled with
// the hash as the Deployment controller does; `hashes` spreads them over several ReplicaSets (a
// rollout).
struct Web {
  int violating = 10;
  int unready = 0;
  int terminating = 0;
  std::vector<std::string> hashes = {"5d8f7c9b4"};
  std::optional<api::Timestamp> newPodCreated = std::nullopt;  // one more Ready pod on the quiet node, created then
};

cluster::SnapshotPtr webSnapshot(const Web& w) {
  ClusterBuilder b;
  b.add(NodeBuilder("quiet").build());
  int i = 0;
  auto pod = [&](const std::string& name) {
    const std::string& hash = w.hashes[static_cast<std::size_t>(i++) % w.hashes.size()];
    PodBuilder p(name);
    p.app("web").label("pod-template-hash", hash).owner("ReplicaSet", "web-" + hash);
    return p;
  };
  for (int n = 0; n < w.violating; ++n) {
    const std::string node = "n" + std::to_string(n);
    b.add(NodeBuilder(node).build());
    b.add(PodBuilder("order-" + node).app("order").node(node).build());
    b.add(pod("web-" + std::to_string(n)).node(node).antiAffinity("app", "order").build());
  }
  for (int n = 0; n < w.unready; ++n) b.add(pod("web-unready-" + std::to_string(n)).node("quiet").notReady().build());
  for (int n = 0; n < w.terminating; ++n)
    b.add(pod("web-terminating-" + std::to_string(n)).node("quiet").terminating().build());
  if (w.newPodCreated) b.add(pod("web-new").node("quiet").created(*w.newPodCreated).build());
  return b.snapshot();
}

struct PacingFixture {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();

  std::unique_ptr<evictor::BudgetGate> gate(const std::string& budgetsYaml) {
    auto engine = engineFor(policyWith(kAnti, "deschedule") + "kdesched:\n  budgets:\n" + budgetsYaml);
    EXPECT_TRUE(engine.isOk()) << engine.error();
    if (!engine.isOk()) return nullptr;
    return std::make_unique<evictor::BudgetGate>(engine->extension.budgets, clock);
  }

  // One run through the real engine and chain with `g` as the gate; refusals as "pod: by: detail".
  PlanOutcome run(evictor::BudgetGate& g, const cluster::Snapshot& snapshot) {
    auto engine = engineFor(policyWith(kAnti, "deschedule"));
    PlanOutcome out;
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink, &g);
    out.cycle = engine->runCycle(snapshot, chain);
    for (const auto& e : sink.evictions()) out.evicted.push_back(e.pod->key());
    for (const auto& r : sink.refusals()) {
      out.refused.push_back(r.wanted.pod->key());
      out.refusedDetails.push_back(r.result.by + ": " + r.result.detail);
      EXPECT_EQ(r.result.refusal, framework::Refusal::Budget) << r.result.by << ": " << r.result.detail;
    }
    return out;
  }
};

std::string budgetErrorFor(const std::string& budgetsYaml) {
  auto engine = engineFor(policyWith(kAnti, "deschedule") + "kdesched:\n  budgets:\n" + budgetsYaml);
  return engine.isOk() ? std::string("(accepted)") : engine.error();
}

// "20%" of a 10-pod Deployment: 2 unavailable at most, so 2 of the 10 wanted are evicted in the
// run and the other 8 refused, naming the budget, the owner and the rule.
TEST(BudgetPacing, MaxUnavailablePerOwnerCapsTheRun) {
  PacingFixture f;
  auto snapshot = webSnapshot({});
  auto g = f.gate("  - {name: web-pacing, maxUnavailablePerOwner: \"20%\"}\n");
  auto out = f.run(*g, *snapshot);
  EXPECT_EQ(out.evicted, (std::vector<std::string>{"default/web-0", "default/web-1"}));
  ASSERT_EQ(out.refused.size(), 8u);
  EXPECT_EQ(out.refusedDetails[0],
            "budget \"web-pacing\": owner Deployment default/web has 2 of 2 allowed pods unavailable "
            "(maxUnavailablePerOwner 20% of 10 pods, rounded down, at least 1)");
  // Not an eviction count: the budget has no remaining-evictions line in --explain.
  EXPECT_TRUE(g->active().empty());
  // When the replacements turn Ready is not known: each refused pod is looked at again shortly.
  auto retries = g->takeRetries();
  ASSERT_EQ(retries.size(), 8u);
  EXPECT_EQ(retries[0].pod.key(), "default/web-2");
  EXPECT_DOUBLE_EQ(retries[0].inSeconds, evictor::BudgetGate::kUnavailableRecheckSeconds);
}

TEST(BudgetPacing, ACountNamesTheOwnerAndTheRule) {
  PacingFixture f;
  auto snapshot = webSnapshot({.violating = 3});
  auto g = f.gate("  - {name: web-pacing, maxUnavailablePerOwner: 1}\n");
  auto out = f.run(*g, *snapshot);
  EXPECT_EQ(out.evicted.size(), 1u);
  ASSERT_EQ(out.refused.size(), 2u);
  EXPECT_EQ(out.refusedDetails[1],
            "budget \"web-pacing\": owner Deployment default/web has 1 of 1 allowed pods unavailable");
}

// The owner's pods that are already not Ready, or terminating, count as unavailable.
TEST(BudgetPacing, UnreadyAndTerminatingPodsCount) {
  PacingFixture f;
  // 9 + 1 not Ready = 10 pods, 20%: 2 allowed, 1 already unavailable.
  auto unready = webSnapshot({.violating = 9, .unready = 1});
  auto g = f.gate("  - {name: web-pacing, maxUnavailablePerOwner: \"20%\"}\n");
  auto out = f.run(*g, *unready);
  EXPECT_EQ(out.evicted.size(), 1u);
  ASSERT_EQ(out.refused.size(), 8u);
  EXPECT_NE(out.refusedDetails[0].find("has 2 of 2 allowed pods unavailable"), std::string::npos);
  // A terminating pod is unavailable and not one of the owner's pods (it is on its way out):
  // 10 + 1 terminating, 20% of 10 = 2, 1 already unavailable.
  auto terminating = webSnapshot({.violating = 10, .terminating = 1});
  out = f.run(*g, *terminating);
  EXPECT_EQ(out.evicted.size(), 1u);
  ASSERT_EQ(out.refused.size(), 9u);
  EXPECT_NE(out.refusedDetails[0].find("has 2 of 2 allowed pods unavailable (maxUnavailablePerOwner 20% of 10 pods"),
            std::string::npos)
      << out.refusedDetails[0];
}

// A restart: a fresh gate over the cluster after the first run (the 2 evicted pods replaced by 2
// that are not Ready yet) refuses as the old one would have: the count comes from the cluster.
TEST(BudgetPacing, ARestartRebuildsTheCountFromTheCluster) {
  PacingFixture f;
  const std::string yaml = "  - {name: web-pacing, maxUnavailablePerOwner: \"20%\"}\n";
  auto before = f.gate(yaml);
  EXPECT_EQ(f.run(*before, *webSnapshot({})).evicted.size(), 2u);
  auto after = f.gate(yaml);
  auto out = f.run(*after, *webSnapshot({.violating = 8, .unready = 2}));
  EXPECT_TRUE(out.evicted.empty());
  ASSERT_EQ(out.refused.size(), 8u);
  EXPECT_EQ(out.refusedDetails[0],
            "budget \"web-pacing\": owner Deployment default/web has 2 of 2 allowed pods unavailable "
            "(maxUnavailablePerOwner 20% of 10 pods, rounded down, at least 1)");
  // Once the replacements are Ready, the owner may lose 2 again.
  auto fresh = f.gate(yaml);
  EXPECT_EQ(f.run(*fresh, *webSnapshot({})).evicted.size(), 2u);
}

// A rollout's two ReplicaSets are one owner: their pods share the Deployment's allowance.
TEST(BudgetPacing, ARolloutsReplicaSetsAreOneOwner) {
  PacingFixture f;
  auto snapshot = webSnapshot({.violating = 4, .hashes = {"5d8f7c9b4", "6b9c8d7f5"}});
  auto g = f.gate("  - {name: web-pacing, maxUnavailablePerOwner: 1}\n");
  auto out = f.run(*g, *snapshot);
  EXPECT_EQ(out.evicted.size(), 1u);
  EXPECT_EQ(out.refused.size(), 3u);
}

// minIntervalPerOwner: after an eviction of the owner's pod, none until the interval has passed;
// the refused pods are to be looked at again when it ends.
TEST(BudgetPacing, MinIntervalPerOwnerSpacesEvictions) {
  PacingFixture f;
  auto snapshot = webSnapshot({.violating = 3});
  auto g = f.gate("  - {name: web-pacing, minIntervalPerOwner: 1m}\n");
  auto out = f.run(*g, *snapshot);
  EXPECT_EQ(out.evicted, std::vector<std::string>{"default/web-0"});
  ASSERT_EQ(out.refused.size(), 2u);
  EXPECT_EQ(out.refusedDetails[0],
            "budget \"web-pacing\": owner Deployment default/web had a pod evicted 0s ago, minIntervalPerOwner 1m");
  g->takeRetries();
  f.clock->advanceSeconds(12);
  out = f.run(*g, *snapshot);
  EXPECT_TRUE(out.evicted.empty());
  ASSERT_EQ(out.refused.size(), 3u);
  EXPECT_EQ(out.refusedDetails[0],
            "budget \"web-pacing\": owner Deployment default/web had a pod evicted 12s ago, minIntervalPerOwner 1m");
  auto retries = g->takeRetries();
  ASSERT_EQ(retries.size(), 3u);
  EXPECT_DOUBLE_EQ(retries[0].inSeconds, 48);
  f.clock->advanceSeconds(48);  // the interval has passed
  out = f.run(*g, *snapshot);
  EXPECT_EQ(out.evicted.size(), 1u);
  EXPECT_EQ(out.refused.size(), 2u);
}

// minIntervalPerOwner across a restart: a new process has no eviction in memory, but the owner's
// youngest pod, created 12 s ago (the replacement of the last process's eviction), starts the
// interval; one created 2 minutes ago does not hold anything.
TEST(BudgetPacing, MinIntervalPerOwnerHoldsAcrossARestart) {
  PacingFixture f;
  const auto now = static_cast<api::Timestamp>(f.clock->unixSeconds());
  auto fresh = f.gate("  - {name: web-pacing, minIntervalPerOwner: 1m}\n");
  auto out = f.run(*fresh, *webSnapshot({.violating = 2, .newPodCreated = now - 12}));
  EXPECT_TRUE(out.evicted.empty());
  ASSERT_EQ(out.refused.size(), 2u);
  EXPECT_EQ(out.refusedDetails[0],
            "budget \"web-pacing\": owner Deployment default/web has a pod created 12s ago (an earlier eviction's "
            "replacement, a scale-up or a rollout), minIntervalPerOwner 1m");
  auto retries = fresh->takeRetries();
  ASSERT_EQ(retries.size(), 2u);
  EXPECT_DOUBLE_EQ(retries[0].inSeconds, 48);

  auto later = f.gate("  - {name: web-pacing, minIntervalPerOwner: 1m}\n");
  out = f.run(*later, *webSnapshot({.violating = 2, .newPodCreated = now - 120}));
  EXPECT_EQ(out.evicted, std::vector<std::string>{"default/web-0"});
  // This process's own eviction, and its replacement created within the second: the eviction is named.
  out = f.run(*later, *webSnapshot({.violating = 2, .newPodCreated = now}));
  ASSERT_EQ(out.refused.size(), 2u);
  EXPECT_EQ(out.refusedDetails[0],
            "budget \"web-pacing\": owner Deployment default/web had a pod evicted 0s ago, minIntervalPerOwner 1m");
}

// Both rules in one budget, alongside maxEvictions: each must allow.
TEST(BudgetPacing, RulesCombineWithMaxEvictions) {
  PacingFixture f;
  auto snapshot = webSnapshot({});
  auto g = f.gate("  - {name: web-pacing, maxEvictions: 5, maxUnavailablePerOwner: 3, minIntervalPerOwner: 10s}\n");
  auto out = f.run(*g, *snapshot);
  EXPECT_EQ(out.evicted.size(), 1u);  // the interval holds the rest of the run
  auto wide = f.gate("  - {name: web-pacing, maxEvictions: 2, maxUnavailablePerOwner: 3}\n");
  out = f.run(*wide, *snapshot);
  EXPECT_EQ(out.evicted.size(), 2u);
  EXPECT_EQ(out.refusedDetails[0], "budget \"web-pacing\": always active: 0 of 2 evictions left in this run");
}

// A percentage of the owner's pods rounds down, as the Deployment controller rounds
// maxUnavailable, but allows at least 1 unless it is 0%.
TEST(BudgetPacing, PercentagesRoundDownButAllowOne) {
  policy::Budget b;
  b.maxUnavailablePerOwner = 20;
  b.unavailablePercent = true;
  EXPECT_EQ(b.unavailableAllowance(10), 2u);
  EXPECT_EQ(b.unavailableAllowance(14), 2u);
  EXPECT_EQ(b.unavailableAllowance(15), 3u);
  EXPECT_EQ(b.unavailableAllowance(4), 1u);  // 0.8 → at least 1
  EXPECT_EQ(b.unavailableAllowance(0), 1u);
  b.maxUnavailablePerOwner = 0;
  EXPECT_EQ(b.unavailableAllowance(10), 0u);
  b.maxUnavailablePerOwner = 3;
  b.unavailablePercent = false;
  EXPECT_EQ(b.unavailableAllowance(100), 3u);
  // Through the engine: 20% of 4 pods still lets one go; 0% none.
  PacingFixture f;
  auto four = webSnapshot({.violating = 4});
  EXPECT_EQ(f.run(*f.gate("  - {name: p, maxUnavailablePerOwner: \"20%\"}\n"), *four).evicted.size(), 1u);
  EXPECT_EQ(f.run(*f.gate("  - {name: p, maxUnavailablePerOwner: \"0%\"}\n"), *four).evicted.size(), 0u);
  EXPECT_EQ(f.run(*f.gate("  - {name: p, maxUnavailablePerOwner: \"50%\"}\n"), *four).evicted.size(), 2u);
}

// A budget that is not active (outside its window) does not pace.
TEST(BudgetPacing, OnlyWhileTheBudgetIsActive) {
  PacingFixture f;
  auto snapshot = webSnapshot({.violating = 3});
  auto g = f.gate("  - {name: p, schedule: \"0 8 * * *\", duration: 1h, maxUnavailablePerOwner: 1}\n");
  f.clock->advance(std::chrono::hours(12));  // 12:00 UTC: outside 08:00-09:00
  EXPECT_EQ(f.run(*g, *snapshot).evicted.size(), 3u);
}

TEST(BudgetPacing, Validation) {
  EXPECT_NE(budgetErrorFor("  - {name: p, maxUnavailablePerOwner: lots}\n")
                .find("kdesched.budgets[0].maxUnavailablePerOwner: must be a count (such as 5) or a percentage string "
                      "(such as \"10%\"), got \"lots\""),
            std::string::npos)
      << budgetErrorFor("  - {name: p, maxUnavailablePerOwner: lots}\n");
  EXPECT_NE(budgetErrorFor("  - {name: p, maxUnavailablePerOwner: \"120%\"}\n")
                .find("kdesched.budgets[0].maxUnavailablePerOwner: a percentage must be from 0% to 100%"),
            std::string::npos);
  EXPECT_NE(
      budgetErrorFor("  - {name: p, minIntervalPerOwner: soon}\n").find("kdesched.budgets[0].minIntervalPerOwner"),
      std::string::npos);
  EXPECT_NE(budgetErrorFor("  - {name: p, minIntervalPerOwner: 0s}\n")
                .find("kdesched.budgets[0].minIntervalPerOwner: must be positive"),
            std::string::npos);
  const std::string typo = budgetErrorFor("  - {name: p, minIntervalPerOwnr: 1m}\n");
  EXPECT_NE(typo.find("minIntervalPerOwnr"), std::string::npos) << typo;
  EXPECT_NE(typo.find("did you mean \"minIntervalPerOwner\"?"), std::string::npos) << typo;
  EXPECT_NE(budgetErrorFor("  - {name: p}\n")
                .find("kdesched.budgets[0].maxEvictions: is required (0 for a freeze) unless the budget sets "
                      "maxUnavailablePerOwner or minIntervalPerOwner"),
            std::string::npos);
  EXPECT_EQ(budgetErrorFor("  - {name: p, minIntervalPerOwner: 1m}\n"), "(accepted)");
}

}  // namespace
}  // namespace kdesched::testing
