// The cycle runner (framework/cycle.cpp) and the verdicts plugins hand it through the Handle
// (framework/verdict.h): the order plugins run in, what a verdict turns into (an eviction, an
// explain row, nothing when nobody reads), and the explain rows the cycle itself writes.
#include "pkg/framework/cycle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "pkg/evictor/evictor.h"
#include "pkg/framework/verdict.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::testing {
namespace {

using framework::ExplainOutcome;
using framework::ExtensionPoint;
using framework::Verdict;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Fakes that record the order in which the cycle runs them.
struct Recorder {
  std::vector<std::string> calls;
};
struct FakeDeschedule : framework::DeschedulePlugin {
  FakeDeschedule(Recorder& r, std::string n) : r(r), n(std::move(n)) {}
  std::string_view name() const override { return n; }
  Status deschedule(framework::Handle& h) override {
    r.calls.push_back(h.profile() + "/" + n);
    return n == "fails" ? Status::error("boom") : Status::ok();
  }
  Recorder& r;
  std::string n;
};
struct FakeBalance : framework::BalancePlugin {
  FakeBalance(Recorder& r, std::string n) : r(r), n(std::move(n)) {}
  std::string_view name() const override { return n; }
  Status balance(framework::Handle& h) override {
    r.calls.push_back(h.profile() + "/" + n);
    return Status::ok();
  }
  Recorder& r;
  std::string n;
};

TEST(Cycle, DeschedulePluginsOfAllProfilesThenBalance) {
  Recorder rec;
  std::vector<framework::Profile> profiles(2);
  for (int i = 0; i < 2; ++i) {
    auto& p = profiles[i];
    p.name = "p" + std::to_string(i);
    auto d = std::make_unique<FakeDeschedule>(rec, i == 0 ? "fails" : "d");
    auto b = std::make_unique<FakeBalance>(rec, "b");
    p.deschedule.push_back(d.get());
    p.balance.push_back(b.get());
    p.instances.push_back(std::move(d));
    p.instances.push_back(std::move(b));
  }
  ClusterBuilder c;
  c.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build());
  auto snap = c.snapshot();
  evictor::PlanSink sink;
  evictor::EvictionChain chain({}, sink);
  FakeClock clock;
  auto res = framework::runCycle(profiles, *snap, std::nullopt, chain, clock);
  EXPECT_EQ(rec.calls, (std::vector<std::string>{"p0/fails", "p1/d", "p0/b", "p1/b"}));
  ASSERT_EQ(res.runs.size(), 4u);
  EXPECT_FALSE(res.runs[0].status.isOk());  // a plugin error does not stop the cycle
  EXPECT_EQ(res.runs[0].extensionPoint, ExtensionPoint::Deschedule);
  EXPECT_EQ(res.runs[3].extensionPoint, ExtensionPoint::Balance);
  EXPECT_EQ(toString(res.runs[3].extensionPoint), "balance");
  EXPECT_EQ(res.nodes, 2u);

  framework::CycleScope onlyBalance;
  onlyBalance.runDeschedule = false;
  rec.calls.clear();
  framework::runCycle(profiles, *snap, std::nullopt, chain, clock, nullptr, onlyBalance);
  EXPECT_EQ(rec.calls, (std::vector<std::string>{"p0/b", "p1/b"}));
}

// A skip reason that counts how often it is said.
struct Counted {
  int* renders;
  const char* words;
  std::string text() const {
    ++*renders;
    return words;
  }
};

// A plugin whose decisions are given by the test: per pod name, a verdict; pods without one it
// does not look at.
struct Scripted : framework::DeschedulePlugin {
  std::function<void(framework::Handle&, const api::Pod&)> decide;
  std::string_view name() const override { return "Scripted"; }
  Status deschedule(framework::Handle& h) override {
    for (const api::Node* n : h.nodes())
      for (const api::Pod* pod : h.podsOnNode(*n))
        if (h.inScope(*pod)) decide(h, *pod);
    return Status::ok();
  }
};

struct VerdictFixture {
  VerdictFixture() {
    auto p = std::make_unique<Scripted>();
    plugin = p.get();
    profiles.resize(1);
    profiles[0].name = "p";
    profiles[0].deschedule.push_back(p.get());
    profiles[0].instances.push_back(std::move(p));
    ClusterBuilder c;
    c.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build());
    for (const char* name : {"a", "b", "c"}) c.add(PodBuilder(name).node("n1").build());
    c.add(PodBuilder("elsewhere").node("gone").build());
    snap = c.snapshot();
  }
  framework::CycleResult run(framework::Explainer* explain, framework::PodScope pods = nullptr) {
    framework::CycleScope scope;
    scope.explain = explain;
    scope.pods = std::move(pods);
    return framework::runCycle(profiles, *snap, std::nullopt, chain, clock, nullptr, scope);
  }
  std::vector<std::string> rows(const framework::Explainer& e, std::string_view name) const {
    std::vector<std::string> out;
    for (const auto& a : e.asked())
      if (a.name == name)
        for (const auto& s : a.steps) out.push_back(std::string(toString(s.outcome)) + ": " + s.why);
    return out;
  }

  Scripted* plugin;
  std::vector<framework::Profile> profiles;
  cluster::SnapshotPtr snap;
  evictor::PlanSink sink;
  evictor::EvictionChain chain{{}, sink};
  FakeClock clock;
};

TEST(Verdicts, ASkipNobodyReadsIsNeverRendered) {
  VerdictFixture f;
  int renders = 0;
  f.plugin->decide = [&](framework::Handle& h, const api::Pod& pod) {
    EXPECT_FALSE(h.admit(pod, Verdict::skip(Counted{&renders, "not a candidate: scripted"})));
  };
  f.run(nullptr);
  EXPECT_EQ(renders, 0);
  EXPECT_THAT(f.sink.evictions(), IsEmpty());

  framework::Explainer explain({"default/b"});
  f.run(&explain);
  EXPECT_EQ(renders, 1) << "said for the asked pod only";
  EXPECT_THAT(f.rows(explain, "b"), ElementsAre("skipped: not a candidate: scripted"));
}

TEST(Verdicts, ACandidateIsEvictedWithItsReasonAndExplainedOnce) {
  VerdictFixture f;
  int renders = 0;
  f.plugin->decide = [&](framework::Handle& h, const api::Pod& pod) {
    if (pod.name != "a") return;
    const Verdict v = Verdict::candidate(Counted{&renders, "rule broken"});
    if (h.admit(pod, v)) h.evict(pod, v.reason);
  };
  framework::Explainer explain({"default/a", "default/c"});
  f.run(&explain);
  ASSERT_EQ(f.sink.evictions().size(), 1u);
  EXPECT_EQ(f.sink.evictions()[0].reason, "rule broken");
  EXPECT_EQ(renders, 1) << "one rendering serves the eviction and its explain row";
  EXPECT_THAT(f.rows(explain, "a"), ElementsAre("evicted: rule broken"));
  // A pod the plugin said nothing about still gets its line from the cycle.
  EXPECT_THAT(f.rows(explain, "c"), ElementsAre("skipped: the plugin did not look at it (not a candidate for it)"));
}

TEST(Verdicts, OneReasonForManyPodsIsRenderedOnce) {
  VerdictFixture f;
  int renders = 0;
  f.plugin->decide = [&](framework::Handle& h, const api::Pod& pod) {
    if (pod.name == "a") h.skipPodsOn(*h.snapshot().node(pod.nodeName), Counted{&renders, "node-wide"});
  };
  f.run(nullptr);
  EXPECT_EQ(renders, 0);
  framework::Explainer explain({"default/a", "default/b", "default/c"});
  f.run(&explain);
  EXPECT_EQ(renders, 1);
  for (const char* name : {"a", "b", "c"}) EXPECT_THAT(f.rows(explain, name), ElementsAre("skipped: node-wide"));
}

TEST(Verdicts, FactsAreReadBackByTheirType) {
  int renders = 0;
  const framework::Reason facts = Counted{&renders, "x"};
  ASSERT_NE(facts.facts<Counted>(), nullptr);
  EXPECT_EQ(facts.facts<Counted>()->renders, &renders);
  EXPECT_EQ(facts.facts<framework::FixedReason>(), nullptr);
  const framework::Reason words = "fixed words";
  EXPECT_NE(words.facts<framework::FixedReason>(), nullptr);
  EXPECT_EQ(words.text(), "fixed words");
  const framework::Reason composed = std::string("composed ") + "text";
  EXPECT_EQ(composed.facts<framework::FixedReason>(), nullptr);
  EXPECT_EQ(composed.text(), "composed text");
  EXPECT_EQ(renders, 0);
}

TEST(Verdicts, TheCycleSaysWhyOfAskedPodsNoPluginSees) {
  VerdictFixture f;
  f.plugin->decide = [](framework::Handle&, const api::Pod&) {};
  framework::Explainer explain({"default/elsewhere", "default/b"});
  f.run(&explain, podNames({"default/a"}));
  EXPECT_THAT(f.rows(explain, "elsewhere"),
              ElementsAre("excluded: no plugin considered it: its node gone is not among the cycle's nodes (the node "
                          "is not in the snapshot)"));
  EXPECT_THAT(f.rows(explain, "b"),
              ElementsAre("skipped: out of scope: this event-triggered run acts only on the pods its events named"));
}

TEST(Verdicts, ASkippedCycleExplainsItself) {
  VerdictFixture f;
  f.plugin->decide = [](framework::Handle&, const api::Pod&) { ADD_FAILURE() << "no plugin runs"; };
  ClusterBuilder c;
  c.add(NodeBuilder("n1").build()).add(PodBuilder("a").node("n1").build());
  f.snap = c.snapshot();
  framework::Explainer explain({"default/a"});
  const framework::CycleResult r = f.run(&explain);
  EXPECT_TRUE(r.skipped);
  EXPECT_THAT(f.rows(explain, "a"),
              ElementsAre("excluded: no plugin considered it: the cycle was skipped (requires >=2 ready nodes "
                          "matching the policy's nodeSelector, found 1)"));
}

}  // namespace
}  // namespace kdesched::testing
