// The DoNotSchedule topology spread filter of the landing estimate, against kube-scheduler's
// PodTopologySpread Filter: skew = count(domain) + self - global minimum, the minimum 0 while
// fewer domains than minDomains exist, nodes counted per nodeAffinityPolicy/nodeTaintsPolicy.
#include "pkg/framework/spread_fit.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

constexpr const char* kZone = "topology.kubernetes.io/zone";

api::TopologySpreadConstraint zoneSpread(std::int32_t maxSkew,
                                         api::UnsatisfiableAction when = api::UnsatisfiableAction::DoNotSchedule) {
  api::TopologySpreadConstraint c;
  c.maxSkew = maxSkew;
  c.topologyKey = kZone;
  c.whenUnsatisfiable = when;
  c.labelSelector = api::LabelSelector{{{"app", "web"}}, {}};
  return c;
}

// Zones a, b, c with one node each (na, nb, nc); `perZone` web pods in each, the first of zone a
// being the pod whose landing is asked ("web-a0").
struct Spread {
  ClusterBuilder b;
  std::shared_ptr<const api::Pod> pod;
  framework::CycleState state;

  Spread(std::vector<int> perZone, api::TopologySpreadConstraint c,
         const std::function<void(PodBuilder&)>& tweak = nullptr) {
    const std::vector<std::string> zones{"a", "b", "c"};
    for (std::size_t z = 0; z < zones.size(); ++z) {
      b.add(NodeBuilder("n" + zones[z]).zone(zones[z]).build());
      for (int i = 0; i < perZone[z]; ++i) {
        PodBuilder p("web-" + zones[z] + std::to_string(i));
        p.app("web").node("n" + zones[z]).spread(c);
        if (tweak) tweak(p);
        auto built = p.build();
        if (z == 0 && i == 0) pod = built;
        b.add(built);
      }
    }
  }

  framework::FitResult on(const std::string& node) {
    auto snap = b.snapshot();
    snapshots.push_back(snap);
    framework::Handle h(*snap, snap->nodes(), state, nullptr, "p", "x");
    const api::Pod* p = nullptr;
    for (const api::Pod* q : snap->pods())
      if (q->name == pod->name) p = q;
    return framework::SpreadFit(h, *p).check(*snap->node(node));
  }
  std::vector<cluster::SnapshotPtr> snapshots;
};

TEST(SpreadFit, SkewOverMaxSkewRejectsTheNode) {
  // Without web-a0: a=1, b=1, c=0; the minimum is 0, so b would reach 2 and c 1.
  Spread s({2, 1, 0}, zoneSpread(1));
  auto onB = s.on("nb");
  EXPECT_FALSE(onB.fits);
  EXPECT_EQ(onB.check, "topology spread");
  EXPECT_NE(onB.reason.find("skew would be 2, more than maxSkew 1"), std::string::npos) << onB.reason;
  EXPECT_TRUE(s.on("nc").fits) << s.on("nc").reason;
  EXPECT_FALSE(s.on("na").fits);  // a=1 without the pod itself, +1
}

TEST(SpreadFit, LargerMaxSkewAccepts) {
  Spread s({2, 1, 0}, zoneSpread(2));
  EXPECT_TRUE(s.on("nb").fits);
}

TEST(SpreadFit, ScheduleAnywayIsNotAFilter) {
  Spread s({2, 1, 0}, zoneSpread(1, api::UnsatisfiableAction::ScheduleAnyway));
  EXPECT_TRUE(s.on("nb").fits);
}

TEST(SpreadFit, FewerDomainsThanMinDomainsMakeTheMinimumZero) {
  // Without web-a0: a=1, b=1, c=1, minimum 1: b may reach 2.
  auto c = zoneSpread(1);
  EXPECT_TRUE(Spread({2, 1, 1}, c).on("nb").fits);
  c.minDomains = 4;  // 3 domains: the minimum counts as 0
  EXPECT_FALSE(Spread({2, 1, 1}, c).on("nb").fits);
}

TEST(SpreadFit, TerminatingAndEvictedPodsAreNotCounted) {
  // Counted, a terminating web pod in c would raise the minimum to 1 and let b reach 2.
  Spread s({2, 1, 0}, zoneSpread(1));
  s.b.add(PodBuilder("web-c-old").app("web").node("nc").terminating().build());
  EXPECT_FALSE(s.on("nb").fits);
  // b's pod evicted earlier in the cycle: b would have 1 and so passes.
  auto snap = s.b.snapshot();
  framework::Handle h(*snap, snap->nodes(), s.state, nullptr, "p", "x");
  for (const api::Pod* q : snap->pods())
    if (q->name == "web-b0") s.state.markEvicted(*q);
  const api::Pod* self = nullptr;
  for (const api::Pod* q : snap->pods())
    if (q->name == "web-a0") self = q;
  EXPECT_TRUE(framework::SpreadFit(h, *self).check(*snap->node("nb")).fits);
}

TEST(SpreadFit, NodeWithoutTheKeyIsRejected) {
  Spread s({1, 0, 0}, zoneSpread(1));
  s.b.add(NodeBuilder("nozone").build());
  auto r = s.on("nozone");
  EXPECT_FALSE(r.fits);
  EXPECT_NE(r.reason.find("has no label topology.kubernetes.io/zone"), std::string::npos) << r.reason;
}

TEST(SpreadFit, NodeAffinityPolicyHonorLeavesUnselectedNodesOut) {
  // The pods want disk=ssd; zone c has only an hdd node. Honor (the default): c is no domain, the
  // minimum is a's or b's 1 and a may reach 2. Ignore: c counts with 0, so a would reach skew 2.
  auto ssd = [](PodBuilder& p) { p.nodeSelector("disk", "ssd"); };
  auto build = [&](std::optional<api::InclusionPolicy> policy) {
    auto c = zoneSpread(1);
    c.nodeAffinityPolicy = policy;
    ClusterBuilder b;
    b.add(NodeBuilder("na").zone("a").label("disk", "ssd").build())
        .add(NodeBuilder("na2").zone("a").label("disk", "ssd").build())
        .add(NodeBuilder("nb").zone("b").label("disk", "ssd").build())
        .add(NodeBuilder("nc").zone("c").label("disk", "hdd").build());
    PodBuilder self("web-b0");
    self.app("web").node("nb").spread(c);
    ssd(self);
    PodBuilder other("web-a0");
    other.app("web").node("na").spread(c);
    ssd(other);
    PodBuilder other2("web-b1");
    other2.app("web").node("nb").spread(c);
    ssd(other2);
    b.add(self.build()).add(other.build()).add(other2.build());
    auto snap = b.snapshot();
    framework::CycleState state;
    framework::Handle h(*snap, snap->nodes(), state, nullptr, "p", "x");
    const api::Pod* p = nullptr;
    for (const api::Pod* q : snap->pods())
      if (q->name == "web-b0") p = q;
    return framework::SpreadFit(h, *p).check(*snap->node("na2")).fits;
  };
  EXPECT_TRUE(build(std::nullopt));
  EXPECT_TRUE(build(api::InclusionPolicy::Honor));
  EXPECT_FALSE(build(api::InclusionPolicy::Ignore));
}

}  // namespace
}  // namespace kdesched::testing
