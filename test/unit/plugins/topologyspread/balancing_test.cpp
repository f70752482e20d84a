// How ConstraintBalancer picks and places pods, through the real engine: which pods of a crowded
// domain move (the movable/protected partition), the order of equal domains, and the
// reason text.
#include "pkg/plugins/topologyspread/balancing.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/topologyspread/spread_testing.h"

namespace kdesched::testing {
namespace {

TEST(TopologySpread, ReasonNamesConstraintDomainsAndSkew) {
  ClusterBuilder b;
  for (auto& n : twoZones()) b.add(n);
  Pods p;
  p.with(1, "n1", spread(1)).add(3, "n1").add(1, "n2");
  for (auto& pod : p.out) b.add(pod);
  auto out = runPolicy(policyWith(kPlugin, "balance"), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(
      out.reasons[0],
      "topologySpreadConstraint {topologyKey: topology.kubernetes.io/zone, maxSkew: 1, whenUnsatisfiable: "
      "DoNotSchedule, labelSelector: foo=bar} skew 3 (zoneA: 4, zoneB: 1) > maxSkew 1; moving this pod leaves skew 1");
}

TEST(TopologySpread, ReasonShowsThePodsDomainAndMinDomains) {
  ClusterBuilder b;
  for (auto& n : threeZones()) b.add(n);
  auto md = spread(1);
  md.minDomains = 4;
  md.nodeTaintsPolicy = api::InclusionPolicy::Honor;
  Pods p;
  p.with(2, "n1", md).with(1, "n2", md);
  for (auto& pod : p.out) b.add(pod);
  auto out = runPolicy(policyWith(kPlugin, "balance"), *b.snapshot());
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(
      out.reasons[0],
      "topologySpreadConstraint {topologyKey: topology.kubernetes.io/zone, maxSkew: 1, whenUnsatisfiable: "
      "DoNotSchedule, labelSelector: foo=bar, minDomains: 4, nodeTaintsPolicy: Honor} skew 2 (zoneA: 2, zoneC: 0; "
      "3 eligible domains < minDomains 4, global minimum 0) > maxSkew 1; moving this pod leaves skew 1");
}

TEST(TopologySpread, EqualDomainsAreOrderedByValue) {
  // Two full domains of 3 and one empty: the tie between zoneA and zoneB is broken by name, so
  // zoneB (sorted last) gives first. Run twice: the plan is the same.
  ClusterBuilder b;
  for (auto& n : threeZones()) b.add(n);
  Pods p;
  p.with(3, "n1", spread(1)).with(3, "n2", spread(1));
  for (auto& pod : p.out) b.add(pod);
  auto first = runPolicy(policyWith(kPlugin, "balance"), *b.snapshot());
  auto second = runPolicy(policyWith(kPlugin, "balance"), *b.snapshot());
  EXPECT_EQ(first.evicted, ns1({"pod-5", "pod-2"}));
  EXPECT_EQ(first.evicted, second.evicted);
  EXPECT_EQ(first.reasons, second.reasons);
}

// --- which pods of a crowded domain move ----------------------------------------------------------
// The partition into movable and protected pods applies the test the target search applies: fit,
// placement under the pod's other hard constraints, room left after the moves planned so far.

const std::string kHostname(api::kLabelHostname);

api::TopologySpreadConstraint webSpread(std::int32_t maxSkew, const std::string& key) {
  return spread(maxSkew, key, UnsatisfiableAction::DoNotSchedule, selectorOf("app", "web"));
}

PlanOutcome runTopologySpread(const std::vector<NodePtr>& nodes, const std::vector<PodPtr>& pods) {
  ClusterBuilder b;
  for (const auto& n : nodes) b.add(n);
  for (const auto& p : pods) b.add(p);
  return runPolicy(policyWith(kPlugin, "balance"), *b.snapshot());
}

TEST(TopologySpreadPartition, PodItsOwnConstraintKeepsOffEveryTargetIsProtectedAndTheNextMoves) {
  // Hostname skew 2 on n5 wants one pod on n8. web-a ranks higher (priority) but its zone
  // constraint rejects n8, which has no zone label; web-b declares nothing and can go.
  std::vector<NodePtr> nodes = {NodeBuilder("n5").build(), NodeBuilder("n8").build()};
  std::vector<PodPtr> pods = {PodBuilder("web-a", "ns1")
                                  .node("n5")
                                  .app("web")
                                  .priority(10)
                                  .spread(webSpread(1, kHostname))
                                  .spread(webSpread(1, kZone))
                                  .build(),
                              PodBuilder("web-b", "ns1").node("n5").app("web").build()};
  EXPECT_EQ(runTopologySpread(nodes, pods).evicted, ns1({"web-b"}));
}

TEST(TopologySpreadPartition, PodWithoutRoomLeftByAnEarlierConstraintIsProtectedAndTheNextMoves) {
  // The first constraint (app=a) moves a-2 to n2, reserving 1500m of its 2000m. The second
  // (app=b) must move one pod: b-big ranks highest but 500m is left; b-small fits.
  auto hostname = [](const char* app) {
    return spread(1, kHostname, UnsatisfiableAction::DoNotSchedule, selectorOf("app", app));
  };
  std::vector<NodePtr> nodes = {NodeBuilder("n1").allocatable(16000, 64 * kGi).build(),
                                NodeBuilder("n2").allocatable(2000, 64 * kGi).build()};
  auto pod = [&](const char* name, const char* app, std::int64_t cpu) {
    return PodBuilder(name, "ns1").node("n1").app(app).requests(cpu, 128 * kMi).spread(hostname(app));
  };
  std::vector<PodPtr> pods = {
      pod("a-1", "a", 1500).build(), pod("a-2", "a", 1500).build(), pod("b-big", "b", 1500).priority(10).build(),
      pod("b-pinned", "b", 100).nodeSelector(kHostname, "n1").build(), pod("b-small", "b", 100).build()};
  EXPECT_EQ(runTopologySpread(nodes, pods).evicted, ns1({"a-2", "b-small"}));
}

TEST(TopologySpreadPartition, PodWithoutRoomLeftByThePodBeforeItInTheSameMoveIsReplaced) {
  // [4,0] moves 2 pods to n2, which has room for one 1500m pod: the two highest-ranked ask
  // 1500m each, so the second is protected and the next pod (100m) goes instead.
  std::vector<NodePtr> nodes = {NodeBuilder("n1").allocatable(16000, 64 * kGi).build(),
                                NodeBuilder("n2").allocatable(2000, 64 * kGi).build()};
  auto pod = [&](const char* name, std::int64_t cpu) {
    return PodBuilder(name, "ns1").node("n1").app("web").requests(cpu, 128 * kMi).spread(webSpread(1, kHostname));
  };
  std::vector<PodPtr> pods = {pod("web-1", 100).build(), pod("web-2", 100).build(),
                              pod("web-3", 1500).priority(10).build(), pod("web-4", 1500).priority(20).build()};
  EXPECT_EQ(runTopologySpread(nodes, pods).evicted, ns1({"web-3", "web-2"}));
}

TEST(TopologySpreadPartition, WithoutTheFitCheckAPodThatFitsNowhereGoesBeforeAProtectedOne) {
  // Hostname [n1 2, n2 0] (tier=web) moves one pod. web-x ranks higher, but leaving zone A would
  // break its zone spread (app=x: A 1, B 2); web-y fits nowhere (3000m, n2 has 800m left), which
  // with topologyBalanceNodeFit false does not keep it.
  std::vector<NodePtr> nodes = {zoneNode("n1", "zoneA"),
                                NodeBuilder("n2").zone("zoneB").allocatable(1000, 8 * kGi).build()};
  auto hostname = spread(1, kHostname, UnsatisfiableAction::DoNotSchedule, selectorOf("tier", "web"));
  auto zone = spread(1, kZone, UnsatisfiableAction::DoNotSchedule, selectorOf("app", "x"));
  ClusterBuilder b;
  for (const auto& n : nodes) b.add(n);
  b.add(PodBuilder("web-x", "ns1")
            .node("n1")
            .label("tier", "web")
            .app("x")
            .priority(10)
            .spread(hostname)
            .spread(zone)
            .build());
  b.add(PodBuilder("web-y", "ns1").node("n1").label("tier", "web").requests(3000, 128 * kMi).build());
  b.add(PodBuilder("x-1", "ns1").node("n2").app("x").build());
  b.add(PodBuilder("x-2", "ns1").node("n2").app("x").build());
  auto out = runPolicy(policyWith(kPlugin, "balance", "      topologyBalanceNodeFit: false\n"), *b.snapshot());
  EXPECT_EQ(out.evicted, ns1({"web-y"}));
}

TEST(TopologySpreadPartition, PodProtectedInOneMoveIsTestedAgainOnceTheMovesHaveChangedItsCounts) {
  // Hostname [n1 4, n2 0, n3 0] (tier=h, ScheduleAnyway) moves 2 pods to n2, then 1 to n3.
  // web-a ranks highest; it asks more than n2 has, and its zone spread (app=web, DoNotSchedule,
  // not balanced) first rejects n3: zone C 1 + 1 - global minimum 0 (zone B) > 1. The first move
  // sends web-m1 and web-m2 (app=web too) to n2, raising the minimum to 1: n3 now accepts web-a,
  // which goes in the second move ahead of web-x. Upstream evicts the same three pods.
  std::vector<NodePtr> nodes = {zoneNode("n1", "zoneA"),
                                NodeBuilder("n2").zone("zoneB").allocatable(1000, 8 * kGi).build(),
                                zoneNode("n3", "zoneC")};
  auto hostname = spread(1, kHostname, UnsatisfiableAction::ScheduleAnyway, selectorOf("tier", "h"));
  auto pod = [&](const char* name) {
    return PodBuilder(name, "ns1").node("n1").app("web").label("tier", "h").requests(100, 128 * kMi).spread(hostname);
  };
  ClusterBuilder b;
  for (const auto& n : nodes) b.add(n);
  b.add(pod("web-a").priority(10).requests(1500, 128 * kMi).spread(webSpread(1, kZone)).build());
  b.add(pod("web-m1").priority(5).build());
  b.add(pod("web-m2").priority(4).build());
  b.add(pod("web-x").build());
  b.add(PodBuilder("web-c", "ns1").node("n3").app("web").build());
  auto out = runPolicy(policyWith(kPlugin, "balance", "      constraints: [ScheduleAnyway]\n"), *b.snapshot());
  EXPECT_EQ(out.evicted, ns1({"web-m2", "web-m1", "web-a"}));
}

TEST(TopologySpreadPartition, WalkDoesNotGoBackToAPodItPassedOverInTheSameMove) {
  // Rack [r1 4, r2 0] (tier=h, ScheduleAnyway) moves 2 pods to r2: n2 (1000m) and n3 (tainted,
  // only web-a tolerates it). web-a ranks highest, but its zone spread (app=web, DoNotSchedule)
  // rejects n3 (zone C 1 + 1 - minimum 0 > 1), so web-p1 and web-p2 (600m each) are taken.
  // web-p2 goes to n2 first, which raises the zone minimum to 1 and leaves 400m: web-p1 no longer
  // fits. n3 would now accept web-a, but the walk has passed it (each pod is asked once per
  // walk, which bounds a move's cost): web-q, next down the order, replaces web-p1.
  const std::string rack = "rack";
  std::vector<NodePtr> nodes = {
      NodeBuilder("n1").zone("zoneA").label(rack, "r1").build(),
      NodeBuilder("n2").zone("zoneB").label(rack, "r2").allocatable(1000, 8 * kGi).build(),
      NodeBuilder("n3").zone("zoneC").label(rack, "r2").taint("dedicated", "c", api::TaintEffect::NoSchedule).build()};
  auto racks = spread(1, rack, UnsatisfiableAction::ScheduleAnyway, selectorOf("tier", "h"));
  auto pod = [&](const char* name, std::int64_t cpu) {
    return PodBuilder(name, "ns1").node("n1").label("tier", "h").requests(cpu, 128 * kMi).spread(racks);
  };
  ClusterBuilder b;
  for (const auto& n : nodes) b.add(n);
  b.add(pod("web-a", 1500)
            .app("web")
            .priority(10)
            .toleration({"dedicated", api::TolerationOp::Equal, "c", api::TaintEffect::NoSchedule, std::nullopt})
            .spread(webSpread(1, kZone))
            .build());
  b.add(pod("web-p1", 600).app("web").priority(5).build());
  b.add(pod("web-p2", 600).app("web").priority(4).build());
  b.add(pod("web-q", 100).build());
  b.add(PodBuilder("web-c", "ns1").node("n3").app("web").build());
  auto out = runPolicy(policyWith(kPlugin, "balance", "      constraints: [ScheduleAnyway]\n"), *b.snapshot());
  EXPECT_EQ(out.evicted, ns1({"web-p2", "web-q"}));
}

// Zone B's nodes are tainted and only web-p tolerates the taint, so the zone constraint can only
// move web-p; web-q ranks highest (priority), so the hostname constraint's order takes it first.
api::Toleration zoneBToleration() {
  return {"dedicated", api::TolerationOp::Equal, "b", api::TaintEffect::NoSchedule, std::nullopt};
}

NodePtr zoneBNode(const char* name) {
  return NodeBuilder(name).zone("zoneB").taint("dedicated", "b", api::TaintEffect::NoSchedule).build();
}

PodBuilder webPod(const char* name, const char* node) { return PodBuilder(name, "ns1").node(node).app("web"); }

TEST(TopologySpreadPartition, PodChosenEarlierIsTakenFirstWhenHeadedWhereThisConstraintNeedsIt) {
  // Every pod declares zone and hostname spreads. Zone [A 4, B 1] moves web-p to b2 (b1 would
  // break its hostname spread). Hostname [a1 3, a2 1, b1 1, b2 0] then moves one pod from a1 to
  // b2: web-p is already headed there, so it counts, and web-q (ranked higher) stays.
  auto both = [](PodBuilder b) { return b.spread(webSpread(1, kZone)).spread(webSpread(1, kHostname)); };
  std::vector<NodePtr> nodes = {zoneNode("a1", "zoneA"), zoneNode("a2", "zoneA"), zoneBNode("b1"), zoneBNode("b2")};
  std::vector<PodPtr> pods = {both(webPod("web-p", "a1").toleration(zoneBToleration())).build(),
                              both(webPod("web-q", "a1").priority(10)).build(), both(webPod("web-r", "a1")).build(),
                              both(webPod("web-s", "b1")).build(), both(webPod("web-t", "a2")).build()};
  EXPECT_EQ(runTopologySpread(nodes, pods).evicted, ns1({"web-p"}));
}

TEST(TopologySpreadPartition, PodChosenEarlierKeepsItsPlaceWhenHeadedElsewhere) {
  // web-p declares only the zone spread, the others zone and hostname. Zone [A 3, B 1] sends
  // web-p to b1, the only zone-B node. Hostname [a1 3, a2 0, b1 1] wants one pod from a1 on a2:
  // web-p is headed for b1, so the order decides and web-q goes to a2, leaving [1, 1, 2]. Had
  // web-p been counted as that move, nothing else would go and a1 2, a2 0, b1 2 would stay.
  auto both = [](PodBuilder b) { return b.spread(webSpread(1, kZone)).spread(webSpread(1, kHostname)); };
  std::vector<NodePtr> nodes = {zoneNode("a1", "zoneA"), zoneNode("a2", "zoneA"), zoneBNode("b1")};
  std::vector<PodPtr> pods = {webPod("web-p", "a1").toleration(zoneBToleration()).spread(webSpread(1, kZone)).build(),
                              both(webPod("web-q", "a1").priority(10)).build(), both(webPod("web-r", "a1")).build(),
                              both(webPod("web-s", "b1")).build()};
  EXPECT_EQ(runTopologySpread(nodes, pods).evicted, ns1({"web-p", "web-q"}));
}

}  // namespace
}  // namespace kdesched::testing
