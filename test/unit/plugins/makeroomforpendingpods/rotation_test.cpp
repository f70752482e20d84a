// Which pending pods a MakeRoomForPendingPods run searches: at most kSearchesPerRun, chosen by
// rotation (least recently searched first, then the given priority/age order), alike replicas of
// one controller costing one search, and the chosen searched in the given order. Then through the
// real engine over two runs: a pod the cap left out in the first run is searched, and helped, in
// the second.
#include "pkg/plugins/makeroomforpendingpods/rotation.h"

#include <gtest/gtest.h>

#include "pkg/engine/engine.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/harness.h"

namespace kdesched::plugins::makeroomforpendingpods {
namespace {

using testing::PodBuilder;
using PodPtr = std::shared_ptr<const api::Pod>;

// `n` pending pods with distinct requests (no two alike), named p0..p<n-1>, in that order.
std::vector<PodPtr> distinctPods(std::size_t n, const std::string& prefix = "p") {
  std::vector<PodPtr> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(PodBuilder(prefix + std::to_string(i))
                      .uid(prefix + "-uid-" + std::to_string(i))
                      .bare()
                      .requests(1000 + static_cast<std::int64_t>(i), 128 * testing::kMi)
                      .build());
  return out;
}

std::vector<const api::Pod*> raw(const std::vector<PodPtr>& pods) {
  std::vector<const api::Pod*> out;
  for (const PodPtr& p : pods) out.push_back(p.get());
  return out;
}

std::vector<std::string> names(const std::vector<const api::Pod*>& pods) {
  std::vector<std::string> out;
  for (const api::Pod* p : pods) out.push_back(p->name);
  return out;
}

// Up to the cap the rotation changes nothing: every pod is searched, in the given order, even when
// some were searched fruitlessly before (the memory only ranks pods once some must wait).
TEST(SearchRotation, UnderTheCapEveryPodIsSearchedInTheGivenOrder) {
  const std::vector<PodPtr> pods = distinctPods(5);
  const std::vector<std::string> all{"p0", "p1", "p2", "p3", "p4"};
  SearchRotation r;
  std::uint64_t run = r.startRun();
  SearchRotation::Choice c = r.choose(raw(pods), 64, true);
  EXPECT_EQ(names(c.searched), all);
  EXPECT_TRUE(c.left.empty());
  r.fruitless(*pods[0], run);
  r.fruitless(*pods[3], run);
  run = r.startRun();
  c = r.choose(raw(pods), 64, true);
  EXPECT_EQ(names(c.searched), all);
  EXPECT_TRUE(c.left.empty());
  // Exactly at the cap, the same.
  r.fruitless(*pods[4], run);
  r.startRun();
  c = r.choose(raw(pods), 5, true);
  EXPECT_EQ(names(c.searched), all);
  EXPECT_TRUE(c.left.empty());
}

TEST(SearchRotation, OverTheCapTheLeastRecentlySearchedGoFirstAndEveryPodGetsATurn) {
  const std::vector<PodPtr> pods = distinctPods(10);
  SearchRotation r;
  // Run 1: no memory, so the given order (priority, age) decides: p0..p3.
  std::uint64_t run = r.startRun();
  SearchRotation::Choice c = r.choose(raw(pods), 4, true);
  EXPECT_EQ(names(c.searched), (std::vector<std::string>{"p0", "p1", "p2", "p3"}));
  EXPECT_EQ(c.left.size(), 6u);
  for (const api::Pod* p : c.searched) r.fruitless(*p, run);
  // Run 2: the never-searched come first: p4..p7.
  run = r.startRun();
  c = r.choose(raw(pods), 4, true);
  EXPECT_EQ(names(c.searched), (std::vector<std::string>{"p4", "p5", "p6", "p7"}));
  for (const api::Pod* p : c.searched) r.fruitless(*p, run);
  // Run 3: p8, p9 (never searched), then the two searched longest ago, in the given order.
  run = r.startRun();
  c = r.choose(raw(pods), 4, true);
  EXPECT_EQ(names(c.searched), (std::vector<std::string>{"p0", "p1", "p8", "p9"}));  // searched in the given order
  EXPECT_EQ(names(c.left), (std::vector<std::string>{"p2", "p3", "p4", "p5", "p6", "p7"}));
}

TEST(SearchRotation, AlikeReplicasOfOneControllerCostOneSearch) {
  std::vector<PodPtr> pods;
  for (int i = 0; i < 50; ++i)
    pods.push_back(PodBuilder("web-" + std::to_string(i))
                       .uid("web-uid-" + std::to_string(i))
                       .ownerUid("ReplicaSet", "web", "rs-web")
                       .requests(2000, 128 * testing::kMi)
                       .build());
  // One replica of the same controller that differs (its requests): a search of its own.
  pods.push_back(
      PodBuilder("web-big").uid("web-big-uid").ownerUid("ReplicaSet", "web", "rs-web").requests(9000, 0).build());
  for (const PodPtr& p : distinctPods(5)) pods.push_back(p);
  SearchRotation r;
  r.startRun();
  const SearchRotation::Choice c = r.choose(raw(pods), 4, true);
  // 50 alike replicas (1 search) + web-big (1) + p0, p1 (2) = 4 searches.
  EXPECT_EQ(c.searched.size(), 53u);
  EXPECT_EQ(names(c.left), (std::vector<std::string>{"p2", "p3", "p4"}));
}

TEST(SearchRotation, AFullRunForgetsPodsNoLongerPendingAScopedRunDoesNot) {
  const std::vector<PodPtr> pods = distinctPods(3);
  SearchRotation r;
  const std::uint64_t run = r.startRun();
  for (const PodPtr& p : pods) r.fruitless(*p, run);
  EXPECT_EQ(r.remembered(), 3u);
  r.startRun();
  r.choose({pods[0].get()}, 64, false);  // a scoped run names p0 only
  EXPECT_EQ(r.remembered(), 3u);
  r.startRun();
  r.choose({pods[0].get(), pods[2].get()}, 64, true);  // p1 is no longer pending
  EXPECT_EQ(r.remembered(), 2u);
}

// Through the engine: 70 pending pods of priority 10 that no move can help (each asks for more
// than any node has), and `small` (priority 0, so last in the order) that one move helps. The
// first run searches 64 of the 70 and leaves `small` out; the second searches the 6 it left and
// `small`, and moves `a` for it.
TEST(SearchRotation, APodTheCapLeftOutIsSearchedAndHelpedInTheNextRun) {
  auto clock = std::make_shared<testing::FakeClock>();
  const auto t0 = static_cast<api::Timestamp>(clock->unixSeconds());
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds(clock);
  auto engine =
      engine::buildEngineFromText(testing::policyWith("MakeRoomForPendingPods", "deschedule"), "policy.yaml", ctx);
  ASSERT_TRUE(engine.isOk()) << engine.error();
  testing::ClusterBuilder b;
  // node1 and node2 (pool=main) have 500m free each; node3 (no pool) is empty.
  b.add(testing::NodeBuilder("node1").label("pool", "main").build());
  b.add(testing::NodeBuilder("node2").label("pool", "main").build());
  b.add(testing::NodeBuilder("node3").build());
  b.add(PodBuilder("a").node("node1").app("a").requests(1000, 0).startTime(t0 - 600).created(t0 - 600).build());
  b.add(PodBuilder("w1").node("node1").app("w1").requests(2500, 0).startTime(t0 - 3600).created(t0 - 3600).build());
  b.add(PodBuilder("w2").node("node2").app("w2").requests(3500, 0).startTime(t0 - 3600).created(t0 - 3600).build());
  auto pendingPod = [&](const std::string& name, std::int64_t cpu, std::int32_t priority) {
    PodBuilder p(name);
    p.uid(name + "-uid")
        .phase(api::PodPhase::Pending)
        .notReady()
        .noStartTime()
        .priority(priority)
        .created(t0 - 400)
        .requests(cpu, 0)
        .nodeSelector("pool", "main")
        .condition("PodScheduled", "False", "Unschedulable", t0 - 300);
    return p.build();
  };
  for (int i = 0; i < 70; ++i) b.add(pendingPod("huge" + std::to_string(i), 9000 + i, 10));
  b.add(pendingPod("small", 1400, 0));  // node1 lacks 900m: a (1000m) moves to node3
  const auto snapshot = b.snapshot();
  auto runOnce = [&](std::string& explained) {
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink);
    framework::Explainer explain({"default/small"});
    framework::CycleScope scope;
    scope.explain = &explain;
    engine->runCycle(*snapshot, chain, nullptr, scope);
    explained = explain.asked().empty() || explain.asked()[0].steps.empty() ? "" : explain.asked()[0].steps.back().why;
    std::vector<std::string> evicted;
    for (const auto& d : sink.evictions()) evicted.push_back(d.pod->key());
    return evicted;
  };
  std::string explained;
  EXPECT_TRUE(runOnce(explained).empty());
  EXPECT_NE(explained.find("not searched this run: 71 pending pods to help, and a run searches at most 64"),
            std::string::npos)
      << explained;
  clock->advanceSeconds(30);
  EXPECT_EQ(runOnce(explained), std::vector<std::string>{"default/a"});
  EXPECT_NE(explained.find("made room on node node1 by evicting default/a"), std::string::npos) << explained;
}

}  // namespace
}  // namespace kdesched::plugins::makeroomforpendingpods
