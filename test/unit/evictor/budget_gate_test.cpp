#include "pkg/evictor/budget_gate.h"

#include <gtest/gtest.h>

#include "pkg/api/timestamp.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

const char* kAnti = "RemovePodsViolatingInterPodAntiAffinity";

Clock::WallTime at(const char* rfc3339) {
  return Clock::WallTime{} + std::chrono::seconds(api::parseTimestamp(rfc3339).value());
}

// Three payment pods, each on a node with an order pod its anti-affinity forbids: three evictions
// wanted per run. Namespaces `default` (pay1, pay2) and `shop` (pay3).
struct BudgetFixture {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  cluster::SnapshotPtr snapshot;
  std::map<std::string, std::vector<std::optional<double>>> gauge;

  BudgetFixture() {
    ClusterBuilder b;
    b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build()).add(NodeBuilder("n3").build());
    b.add(NodeBuilder("n4").build());
    b.add(PodBuilder("order-n1").app("order").node("n1").build());
    b.add(PodBuilder("order-n2").app("order").node("n2").build());
    b.add(PodBuilder("order-n3", "shop").app("order").node("n3").build());
    b.add(PodBuilder("pay1").app("payment").node("n1").antiAffinity("app", "order").build());
    b.add(PodBuilder("pay2").app("payment").node("n2").antiAffinity("app", "order").build());
    b.add(PodBuilder("pay3", "shop").app("payment").node("n3").antiAffinity("app", "order").build());
    snapshot = b.snapshot();
  }

  void setTime(const char* rfc3339) { clock->advance(at(rfc3339) - clock->wallNow()); }

  std::unique_ptr<evictor::BudgetGate> gate(const std::string& budgetsYaml) {
    auto engine = engineFor(policyWith(kAnti, "deschedule") + "kdesched:\n  budgets:\n" + budgetsYaml);
    EXPECT_TRUE(engine.isOk()) << engine.error();
    if (!engine.isOk()) return nullptr;
    return std::make_unique<evictor::BudgetGate>(
        engine->extension.budgets, clock,
        [this](const std::string& name, std::optional<double> remaining) { gauge[name].push_back(remaining); });
  }

  // One run through the real engine and chain with `g` as the gate.
  PlanOutcome run(evictor::BudgetGate& g) {
    auto engine = engineFor(policyWith(kAnti, "deschedule"));
    PlanOutcome out;
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink, &g);
    out.cycle = engine->runCycle(*snapshot, chain);
    for (const auto& e : sink.evictions()) out.evicted.push_back(e.pod->key());
    for (const auto& r : sink.refusals()) {
      out.refused.push_back(r.wanted.pod->key() + " by " + r.result.by);
      out.refusedDetails.push_back(r.result.detail);
      EXPECT_EQ(r.result.refusal, framework::Refusal::Budget);
    }
    return out;
  }
};

TEST(BudgetGate, AFreezeRefusesNamingTheBudgetAndItsEnd) {
  BudgetFixture f;
  auto g = f.gate(
      "  - {name: business-hours, schedule: \"0 8 * * *\", timeZone: Europe/Berlin, duration: 10h, maxEvictions: 0}\n");
  f.setTime("2026-12-07T12:00:00Z");
  auto out = f.run(*g);
  EXPECT_TRUE(out.evicted.empty());
  ASSERT_EQ(out.refused.size(), 3u);
  EXPECT_EQ(out.refused[0], "default/pay1 by budget \"business-hours\"");
  EXPECT_EQ(out.refusedDetails[0], "active until 2026-12-07T18:00:00+01:00 (Europe/Berlin): 0 of 0 evictions left");
  // Each refused pod is to be looked at again when the window ends, 5 hours later.
  auto retries = g->takeRetries();
  ASSERT_EQ(retries.size(), 3u);
  EXPECT_EQ(retries[0].plugin, kAnti);
  EXPECT_DOUBLE_EQ(retries[0].inSeconds, 5 * 3600);
  EXPECT_TRUE(g->takeRetries().empty());
  EXPECT_EQ(f.gauge["business-hours"].back(), std::optional<double>(0));

  f.setTime("2026-12-07T17:00:00Z");  // the window's end, exclusive
  out = f.run(*g);
  EXPECT_EQ(out.evicted.size(), 3u);
  EXPECT_TRUE(out.refused.empty());
  EXPECT_EQ(f.gauge["business-hours"].back(), std::nullopt);
  ASSERT_EQ(g->active().size(), 0u);
}

// A window's allowance holds across the runs inside it; a new tick opens a new count.
TEST(BudgetGate, AWindowCountsEvictionsAcrossRuns) {
  BudgetFixture f;
  auto g = f.gate("  - {name: nightly, schedule: \"0 22 * * *\", duration: 4h, maxEvictions: 2}\n");
  f.setTime("2026-12-07T23:00:00Z");
  auto first = f.run(*g);
  EXPECT_EQ(first.evicted.size(), 2u);
  ASSERT_EQ(first.refused.size(), 1u);
  EXPECT_EQ(first.refusedDetails[0], "active until 2026-12-08T02:00:00+00:00 (UTC): 0 of 2 evictions left");
  f.setTime("2026-12-08T01:00:00Z");  // same window, past midnight
  auto second = f.run(*g);
  EXPECT_TRUE(second.evicted.empty());
  EXPECT_EQ(second.refused.size(), 3u);
  f.setTime("2026-12-08T22:30:00Z");  // the next night's window
  EXPECT_EQ(f.run(*g).evicted.size(), 2u);
}

// Without a schedule a budget is always active and caps each run.
TEST(BudgetGate, AnUnscheduledBudgetCapsEachRun) {
  BudgetFixture f;
  auto g = f.gate("  - {name: trickle, maxEvictions: 1}\n");
  for (int run = 0; run < 2; ++run) {
    auto out = f.run(*g);
    EXPECT_EQ(out.evicted.size(), 1u) << run;
    ASSERT_EQ(out.refusedDetails.size(), 2u) << run;
    EXPECT_EQ(out.refusedDetails[0], "always active: 0 of 1 evictions left in this run");
  }
  EXPECT_TRUE(g->takeRetries().empty());  // no window end to wait for: the next cycle sees them
}

// Several active budgets on one pod: each must allow, so the smallest wins, whatever the order.
TEST(BudgetGate, OverlappingBudgetsTheSmallestWins) {
  for (const std::string& yaml :
       {std::string("  - {name: wide, maxEvictions: 5}\n  - {name: narrow, maxEvictions: 1}\n"),
        std::string("  - {name: narrow, maxEvictions: 1}\n  - {name: wide, maxEvictions: 5}\n")}) {
    BudgetFixture f;
    auto g = f.gate(yaml);
    auto out = f.run(*g);
    EXPECT_EQ(out.evicted.size(), 1u) << yaml;
    ASSERT_EQ(out.refused.size(), 2u) << yaml;
    EXPECT_EQ(out.refused[0], "default/pay2 by budget \"narrow\"");
  }
  // The smaller one scoped to another namespace: the default pods take the wider one.
  BudgetFixture f;
  auto g = f.gate(
      "  - {name: wide, maxEvictions: 3}\n"
      "  - {name: shop-freeze, maxEvictions: 0, scope: {namespaces: {include: [shop]}}}\n");
  auto out = f.run(*g);
  EXPECT_EQ(out.evicted, (std::vector<std::string>{"default/pay1", "default/pay2"}));
  EXPECT_EQ(out.refused, std::vector<std::string>{"shop/pay3 by budget \"shop-freeze\""});
}

// Two spent scheduled budgets on one pod: the refusal names the one whose window ends last, and
// the pod is looked at again then, not when the first ends.
TEST(BudgetGate, SeveralSpentBudgetsTheLongestHoldIsNamed) {
  BudgetFixture f;
  auto g = f.gate(
      "  - {name: short, schedule: \"0 12 * * *\", duration: 1h, maxEvictions: 0}\n"
      "  - {name: long, schedule: \"0 12 * * *\", duration: 3h, maxEvictions: 0}\n"
      "  - {name: early, schedule: \"0 11 * * *\", duration: 2h, maxEvictions: 0}\n");
  f.setTime("2026-12-07T12:30:00Z");
  auto out = f.run(*g);
  ASSERT_EQ(out.refused.size(), 3u);
  EXPECT_EQ(out.refused[0], "default/pay1 by budget \"long\"");
  auto retries = g->takeRetries();
  ASSERT_EQ(retries.size(), 3u);
  EXPECT_DOUBLE_EQ(retries[0].inSeconds, 2.5 * 3600);
}

TEST(BudgetGate, ScopeByPluginAndLabels) {
  BudgetFixture f;
  auto other = f.gate("  - {name: other-plugin, maxEvictions: 0, scope: {plugins: [PodLifeTime]}}\n");
  EXPECT_EQ(f.run(*other).evicted.size(), 3u);
  auto mine = f.gate("  - {name: mine, maxEvictions: 0, scope: {plugins: [" + std::string(kAnti) + "]}}\n");
  EXPECT_EQ(f.run(*mine).evicted.size(), 0u);
  auto labels = f.gate("  - {name: orders, maxEvictions: 0, scope: {labelSelector: {matchLabels: {app: order}}}}\n");
  EXPECT_EQ(f.run(*labels).evicted.size(), 3u);
}

// "50%" of the pods in scope in the snapshot, rounded down: default holds 2 order + 2 payment pods
// (allowance 2), shop 1 order + 1 payment (allowance 1).
TEST(BudgetGate, PercentagesOfThePodsInScopeRoundDown) {
  BudgetFixture f;
  auto g = f.gate("  - {name: half, maxEvictions: \"50%\", scope: {namespaces: {include: [default]}}}\n");
  auto out = f.run(*g);
  EXPECT_EQ(out.evicted.size(), 3u);  // 50% of 4 = 2 in default, and shop is out of scope
  auto tight = f.gate("  - {name: third, maxEvictions: \"30%\", scope: {namespaces: {include: [default]}}}\n");
  out = f.run(*tight);
  EXPECT_EQ(out.evicted, (std::vector<std::string>{"default/pay1", "shop/pay3"}));  // 30% of 4 = 1.2 → 1
  ASSERT_EQ(out.refusedDetails.size(), 1u);
  EXPECT_EQ(out.refusedDetails[0], "always active: 0 of 1 evictions left (30% of 4 pods, rounded down: 1) in this run");
  const auto active = tight->active();
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].allowance, 1u);
  EXPECT_EQ(active[0].used, 1u);
}

TEST(BudgetGate, AMisspeltPluginInAScopeIsAnError) {
  auto engine = engineFor(policyWith(kAnti, "deschedule") +
                          "kdesched:\n  budgets:\n  - {name: b, maxEvictions: 0, scope: {plugins: [PodLifeTme]}}\n");
  ASSERT_FALSE(engine.isOk());
  EXPECT_NE(engine.error().find(
                "kdesched.budgets[0].scope.plugins[0]: unknown plugin \"PodLifeTme\" (did you mean \"PodLifeTime\"?)"),
            std::string::npos)
      << engine.error();
}

}  // namespace
}  // namespace kdesched::testing
