// The landing estimate: which other nodes the pod fits now, the expected one (least allocated by
// requests, ties by name), and why the rest do not.
#include "pkg/framework/landing.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

struct Estimate {
  ClusterBuilder b;
  framework::CycleState state;
  cluster::SnapshotPtr snap;

  Estimate() { b.add(NodeBuilder("src").build()); }
  Estimate(policy::Compat compat) : state(compat) { b.add(NodeBuilder("src").build()); }

  const api::Pod* pod(const std::string& name) const {
    for (const api::Pod* p : snap->pods())
      if (p->name == name) return p;
    return nullptr;
  }
  // The landing of pod "p" (on node "src", 1 cpu and 1Gi requested unless `pod` says otherwise).
  framework::Landing of(std::shared_ptr<const api::Pod> p = nullptr) {
    b.add(p ? p : PodBuilder("p").node("src").requests(1000, kGi).build());
    snap = b.snapshot();
    framework::Handle h(*snap, snap->nodes(), state, nullptr, "prof", "plugin");
    return framework::estimateLanding(h, *pod("p"));
  }
};

TEST(Landing, FitsSeveralExpectsTheLeastAllocatedTiesByName) {
  Estimate e;
  e.b.add(NodeBuilder("a").build()).add(NodeBuilder("b").build()).add(NodeBuilder("c").build());
  e.b.add(NodeBuilder("d").build());
  e.b.add(PodBuilder("busy-a").node("a").requests(3000, 4 * kGi).build());
  e.b.add(PodBuilder("busy-c").node("c").requests(1000, kGi).build());
  e.b.add(PodBuilder("busy-d").node("d").requests(1000, kGi).build());
  auto l = e.of();
  EXPECT_EQ(l.fitCount, 4u);
  EXPECT_EQ(l.fits, (std::vector<std::string>{"b", "c", "d"}));  // b empty; c and d tie: by name
  EXPECT_EQ(l.expected(), "b");
  EXPECT_EQ(l.column(), "b (+3 fit)");
  EXPECT_EQ(l.describe(), "expected on b (fits 4 nodes: b, c, d and 1 more)");
  EXPECT_FALSE(l.fitsNowhere());
}

TEST(Landing, FitsOneTalliesTheOthers) {
  Estimate e;
  e.b.add(NodeBuilder("cordoned").unschedulable().build())
      .add(NodeBuilder("tainted").taint("dedicated", "db", api::TaintEffect::NoSchedule).build())
      .add(NodeBuilder("ok").build())
      .add(NodeBuilder("down").notReady().build());
  auto l = e.of();
  EXPECT_EQ(l.fitCount, 1u);
  EXPECT_EQ(l.column(), "ok");
  EXPECT_EQ(l.describe(), "expected on ok (fits 1 node: ok)");
  using Tally = std::vector<std::pair<std::string, std::size_t>>;
  EXPECT_EQ(l.unfit, (Tally{{"not ready", 1}, {"unschedulable", 1}, {"untolerated taint", 1}}));
}

TEST(Landing, FitsNowhereSaysWhy) {
  Estimate e;
  e.b.add(NodeBuilder("small1").allocatable(500, 8 * kGi).build())
      .add(NodeBuilder("small2").allocatable(500, 8 * kGi).build())
      .add(NodeBuilder("tainted").taint("dedicated", "db", api::TaintEffect::NoExecute).build())
      .add(NodeBuilder("cordoned").unschedulable().build());
  auto l = e.of();
  EXPECT_TRUE(l.fitsNowhere());
  EXPECT_EQ(l.expected(), "");
  EXPECT_EQ(l.column(), "nowhere: would stay Pending");
  EXPECT_EQ(l.describe(),
            "fits no node, would stay Pending (2 insufficient cpu, 1 unschedulable, 1 untolerated taint)");
}

TEST(Landing, ItsOwnNodeIsNoCandidate) {
  Estimate e;
  auto l = e.of();
  EXPECT_TRUE(l.fitsNowhere());
  EXPECT_EQ(l.describe(), "fits no node, would stay Pending (no other node)");
}

TEST(Landing, AntiAffinityAndSpreadAreFilters) {
  Estimate e;
  e.b.add(NodeBuilder("with-order").build()).add(NodeBuilder("free").build());
  e.b.add(PodBuilder("order").app("order").node("with-order").build());
  auto l = e.of(PodBuilder("p").app("payment").node("src").antiAffinity("app", "order").build());
  EXPECT_EQ(l.fits, (std::vector<std::string>{"free"}));
  EXPECT_EQ(l.unfit, (std::vector<std::pair<std::string, std::size_t>>{{"pod anti-affinity", 1}}));
}

TEST(Landing, DoNotScheduleSpreadIsAFilter) {
  // web spread over zones, maxSkew 1: a has the pod and one more, b one, c none. Without the
  // pod, b would reach 2 over c's 0: only c fits.
  api::TopologySpreadConstraint c;
  c.topologyKey = "topology.kubernetes.io/zone";
  c.labelSelector = api::LabelSelector{{{"app", "web"}}, {}};
  Estimate e;
  e.b.add(NodeBuilder("na").zone("a").build()).add(NodeBuilder("nb").zone("b").build());
  e.b.add(NodeBuilder("nc").zone("c").build());
  e.b.add(PodBuilder("web-a").app("web").node("na").build()).add(PodBuilder("web-b").app("web").node("nb").build());
  auto l = e.of(PodBuilder("p").app("web").node("na").spread(c).build());
  EXPECT_EQ(l.fits, (std::vector<std::string>{"nc"}));
  EXPECT_EQ(l.unfit, (std::vector<std::pair<std::string, std::size_t>>{{"topology spread", 2}}));
}

TEST(Landing, PodsEvictedEarlierInTheCycleAreGone) {
  Estimate e;
  e.b.add(NodeBuilder("full").allocatable(1000, 8 * kGi).build());
  e.b.add(PodBuilder("hog").node("full").requests(1000, kGi).build());
  EXPECT_TRUE(e.of().fitsNowhere());
  e.state.markEvicted(*e.pod("hog"));
  framework::Handle h(*e.snap, e.snap->nodes(), e.state, nullptr, "prof", "plugin");
  EXPECT_EQ(framework::estimateLanding(h, *e.pod("p")).expected(), "full");
}

TEST(Landing, InABigClusterTheLookStopsAtEnoughFitsGoingRoundFromItsOwnNode) {
  Estimate e;  // "src" sorts after every "n..." node: the look starts at n000
  for (int i = 0; i < 150; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "n%03d", i);
    e.b.add(NodeBuilder(name).build());
  }
  e.b.add(PodBuilder("busy").node("n000").requests(100, 0).build());
  auto l = e.of();
  EXPECT_FALSE(l.fitCountExact);
  EXPECT_EQ(l.fitCount, framework::Landing::kEnoughFits);
  EXPECT_EQ(l.fits, (std::vector<std::string>{"n001", "n002", "n003"}));
  EXPECT_EQ(l.column(), "n001 (+9 or more fit)");
  EXPECT_EQ(l.describe(), "expected on n001 (fits 10 or more nodes: n001, n002, n003 and 7 more)");

  Estimate mid;  // from n050 the look goes to n051 and on
  for (int i = 0; i < 150; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "n%03d", i);
    mid.b.add(NodeBuilder(name).build());
  }
  EXPECT_EQ(mid.of(PodBuilder("p").node("n050").requests(1000, kGi).build()).expected(), "n051");
}

}  // namespace
}  // namespace kdesched::testing
