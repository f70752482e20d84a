// MakeRoomForPendingPods over several runs of one engine (as the daemon keeps it), with a fake
// clock: a pod room was made for is not tried again while the anti-flapping backoff holds
// (doubling per try, capped), each try ends with one outcome (still_pending when the backoff runs
// out, scheduled / scheduled_elsewhere when bound, gone when deleted), reported once.
#include "pkg/plugins/makeroomforpendingpods/tries.h"

#include <gtest/gtest.h>

#include "pkg/engine/engine.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

// backoffInitial 5m, backoffMax 8m: the first try holds 5 minutes, the second and later 8.
const std::string kPolicy = policyWith("MakeRoomForPendingPods", "deschedule") +
                            "kdesched:\n  antiFlapping: {backoffInitial: 5m, backoffMax: 8m}\n";

struct Runs {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  api::Timestamp t0 = static_cast<api::Timestamp>(clock->unixSeconds());
  std::vector<framework::PendingOutcome> outcomes;
  std::optional<engine::Engine> engine;
  std::string explained;  // the last explain row of default/big

  Runs() {
    framework::BuildContext ctx;
    ctx.now = framework::WallSeconds(clock);
    ctx.pendingOutcome = [this](const framework::PendingOutcome& o) { outcomes.push_back(o); };
    auto e = engine::buildEngineFromText(kPolicy, "policy.yaml", ctx);
    EXPECT_TRUE(e.isOk()) << e.error();
    if (e.isOk()) engine.emplace(std::move(e.value()));
  }

  // node1 and node2 have 500m free each, node3 is empty; big (1500m, pool=main) fits neither
  // pool node until a (1000m, node1) goes to node3. `bigOn`: big is bound there instead; `bigGone`:
  // it is not in the cluster any more.
  cluster::SnapshotPtr cluster(const std::string& bigOn = "", bool bigGone = false) const {
    ClusterBuilder b;
    b.add(NodeBuilder("node1").label("pool", "main").build());
    b.add(NodeBuilder("node2").label("pool", "main").build());
    b.add(NodeBuilder("node3").build());
    auto running = [&](const std::string& name, const std::string& node, std::int64_t cpu, api::Timestamp age) {
      return PodBuilder(name)
          .node(node)
          .app(name)
          .requests(cpu, 128 * kMi)
          .startTime(t0 - age)
          .created(t0 - age)
          .build();
    };
    b.add(running("a", "node1", 1000, 600));
    b.add(running("w1", "node1", 2500, 3600));
    b.add(running("w2", "node2", 3500, 3600));
    PodBuilder big("big");
    big.requests(1500, 128 * kMi).nodeSelector("pool", "main").created(t0 - 400);
    if (bigOn.empty())
      big.phase(api::PodPhase::Pending)
          .notReady()
          .noStartTime()
          .condition("PodScheduled", "False", "Unschedulable", t0 - 300);
    else
      big.node(bigOn);
    if (!bigGone) b.add(big.build());
    return b.snapshot();
  }

  std::vector<std::string> run(const cluster::Snapshot& snapshot) {
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink);
    framework::Explainer explain({"default/big"});
    framework::CycleScope scope;
    scope.explain = &explain;
    engine->runCycle(snapshot, chain, nullptr, scope);
    explained.clear();
    if (!explain.asked().empty() && !explain.asked()[0].steps.empty()) explained = explain.asked()[0].steps.back().why;
    std::vector<std::string> evicted;
    for (const auto& d : sink.evictions()) evicted.push_back(d.pod->key());
    return evicted;
  }
};

TEST(MakeRoomTries, APodStillPendingIsNotTriedAgainWithinTheBackoff) {
  Runs r;
  ASSERT_TRUE(r.engine);
  const auto pending = r.cluster();
  EXPECT_EQ(r.run(*pending), std::vector<std::string>{"default/a"});
  EXPECT_TRUE(r.outcomes.empty());

  // A minute on, big is still pending (and a, in this snapshot, still there): held, not tried.
  r.clock->advanceSeconds(60);
  EXPECT_TRUE(r.run(*pending).empty());
  EXPECT_NE(r.explained.find("not helped now: room was made for it on node node1 1m ago (try 1)"), std::string::npos)
      << r.explained;
  EXPECT_NE(r.explained.find("tried again 5m after that try"), std::string::npos) << r.explained;
  EXPECT_TRUE(r.outcomes.empty());

  // At 5m the backoff has run out: the first try ends still_pending, and a second try goes out.
  r.clock->advanceSeconds(240);
  EXPECT_EQ(r.run(*pending), std::vector<std::string>{"default/a"});
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].result, "still_pending");
  EXPECT_EQ(r.outcomes[0].note,
            "pending pod default/big still not scheduled 5m after room was made on node node1 (try 1); it may be "
            "tried again");

  // The second try holds 8m (5m doubled is 10m, capped by backoffMax): still held at 7m59s.
  r.clock->advanceSeconds(479);
  EXPECT_TRUE(r.run(*pending).empty());
  EXPECT_NE(r.explained.find("(try 2)"), std::string::npos) << r.explained;
  EXPECT_EQ(r.outcomes.size(), 1u);

  // Then the scheduler places big on node1: the second try ends `scheduled`, once.
  r.clock->advanceSeconds(1);
  const auto bound = r.cluster("node1");
  EXPECT_TRUE(r.run(*bound).empty());
  r.run(*bound);
  ASSERT_EQ(r.outcomes.size(), 2u);
  EXPECT_EQ(r.outcomes[1].result, "scheduled");
  EXPECT_EQ(r.outcomes[1].uid, "uid-default-big");
  EXPECT_EQ(r.outcomes[1].note,
            "pending pod default/big scheduled on node node1 8m after room was made on node node1 (try 2)");
}

TEST(MakeRoomTries, OutcomesElsewhereAndGone) {
  Runs r;
  ASSERT_TRUE(r.engine);
  EXPECT_EQ(r.run(*r.cluster()), std::vector<std::string>{"default/a"});
  r.clock->advanceSeconds(20);
  r.run(*r.cluster("node2"));
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].result, "scheduled_elsewhere");
  EXPECT_NE(r.outcomes[0].note.find("scheduled on node node2, not the node room was made on, 20s after"),
            std::string::npos)
      << r.outcomes[0].note;

  // A new pending pod of the same name and UID is a fresh start (the earlier tries were settled).
  EXPECT_EQ(r.run(*r.cluster()), std::vector<std::string>{"default/a"});
  r.clock->advanceSeconds(5);
  r.run(*r.cluster("", true));
  ASSERT_EQ(r.outcomes.size(), 2u);
  EXPECT_EQ(r.outcomes[1].result, "gone");
  EXPECT_EQ(r.outcomes[1].note,
            "pending pod default/big gone before it was scheduled, 5s after room was made on node node1 (try 1)");
}

// The defaults are anti-flapping's: 10m, doubling, up to 6h.
TEST(MakeRoomTries, TheDefaultBackoffIsAntiFlappingsTenMinutes) {
  plugins::makeroomforpendingpods::Tries tries({}, nullptr);
  auto pod = PodBuilder("p").phase(api::PodPhase::Pending).build();
  tries.tried(*pod, "node1", 1000);
  EXPECT_TRUE(tries.holds(*pod, 1599).has_value());
  EXPECT_FALSE(tries.holds(*pod, 1600).has_value());
  for (int i = 0; i < 10; ++i) tries.tried(*pod, "node1", 1000);  // try 11: 10m * 2^10, capped at 6h
  EXPECT_TRUE(tries.holds(*pod, 1000 + 6 * 3600 - 1).has_value());
  EXPECT_FALSE(tries.holds(*pod, 1000 + 6 * 3600).has_value());
}

}  // namespace
}  // namespace kdesched::testing
