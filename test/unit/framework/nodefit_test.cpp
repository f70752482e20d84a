#include "pkg/framework/nodefit.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

struct FitCase {
  std::string name;
  std::vector<std::shared_ptr<const api::Pod>> others;  // already on the target node "t"
  std::shared_ptr<const api::Node> target;
  std::shared_ptr<const api::Pod> pod;  // on node "src"
  bool want;
  std::string reasonContains = "";
};

class NodeFit : public ::testing::TestWithParam<FitCase> {};

TEST_P(NodeFit, Fits) {
  const auto& c = GetParam();
  ClusterBuilder b;
  b.add(NodeBuilder("src").build()).add(c.target).add(c.pod);
  for (auto& o : c.others) b.add(o);
  auto snap = b.snapshot();
  framework::CycleState state;
  framework::Handle h(*snap, snap->nodes(), state, nullptr, "p", "x");
  auto r = framework::nodeFit(h, *c.pod, *snap->node("t"));
  EXPECT_EQ(r.fits, c.want) << r.reason;
  if (!c.reasonContains.empty()) {
    EXPECT_NE(r.reason.find(c.reasonContains), std::string::npos) << r.reason;
  }
}

api::Toleration tol(std::string key, api::TaintEffect e) {
  api::Toleration t;
  t.key = std::move(key);
  t.op = api::TolerationOp::Exists;
  t.effect = e;
  return t;
}

std::vector<FitCase> fitCases() {
  auto pod = [] { return PodBuilder("p").node("src").requests(1000, kGi); };
  auto t = [] { return NodeBuilder("t"); };
  return {
      {"empty node fits", {}, t().build(), pod().build(), true},
      {"unschedulable", {}, t().unschedulable().build(), pod().build(), false, "unschedulable"},
      {"nodeSelector mismatch", {}, t().build(), pod().nodeSelector("disk", "ssd").build(), false, "selector"},
      {"nodeSelector match", {}, t().label("disk", "ssd").build(), pod().nodeSelector("disk", "ssd").build(), true},
      {"required affinity NotIn",
       {},
       t().label("zone", "a").build(),
       pod().requiredNodeAffinity("zone", api::NodeSelectorOp::NotIn, {"a"}).build(),
       false},
      {"NoSchedule taint not tolerated",
       {},
       t().taint("k", "v", api::TaintEffect::NoSchedule).build(),
       pod().build(),
       false,
       "taint k=v:NoSchedule"},
      {"NoExecute taint not tolerated",
       {},
       t().taint("k", "", api::TaintEffect::NoExecute).build(),
       pod().build(),
       false},
      {"PreferNoSchedule ignored",
       {},
       t().taint("k", "", api::TaintEffect::PreferNoSchedule).build(),
       pod().build(),
       true},
      {"taint tolerated",
       {},
       t().taint("k", "v", api::TaintEffect::NoSchedule).build(),
       pod().toleration(tol("k", api::TaintEffect::NoSchedule)).build(),
       true},
      {"cpu insufficient",
       {PodBuilder("o").node("t").requests(3500, kGi).build()},
       t().build(),
       pod().build(),
       false,
       "insufficient cpu"},
      {"memory insufficient",
       {PodBuilder("o").node("t").requests(100, 7 * kGi + 1).build()},
       t().build(),
       pod().build(),
       false,
       "insufficient memory"},
      {"terminal pods do not use resources",
       {PodBuilder("o").node("t").requests(3500, kGi).phase(api::PodPhase::Succeeded).build()},
       t().build(),
       pod().build(),
       true},
      {"no pod slot",
       {PodBuilder("o").node("t").requests(0, 0).build()},
       t().allocatable(4000, 8 * kGi, 1).build(),
       pod().build(),
       false,
       "pod slot"},
      {"extended resource missing from node",
       {},
       t().build(),
       pod().request("nvidia.com/gpu", 1000).build(),
       false,
       "nvidia.com/gpu"},
      {"extended resource available",
       {},
       t().extended("nvidia.com/gpu", 2).build(),
       pod().request("nvidia.com/gpu", 1000).build(),
       true},
      {"pod's anti-affinity against a pod on the target",
       {PodBuilder("o").app("order").node("t").build()},
       t().build(),
       pod().antiAffinity("app", "order").build(),
       false,
       "anti-affinity"},
      {"existing pod's anti-affinity against the pod (symmetric)",
       {PodBuilder("o").app("order").node("t").antiAffinity("app", "payment").build()},
       t().build(),
       pod().app("payment").build(),
       false,
       "anti-affinity"},
      {"anti-affinity needs the topology key on the node",
       {PodBuilder("o").app("order").node("t").build()},
       t().build(),
       pod().antiAffinity("app", "order", "rack").build(),
       true},
  };
}

INSTANTIATE_TEST_SUITE_P(Table, NodeFit, ::testing::ValuesIn(fitCases()), [](const auto& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(NodeFitUsage, EvictionsThisCycleFreeCapacity) {
  ClusterBuilder b;
  auto big = PodBuilder("big").node("t").requests(3500, kGi).build();
  auto pod = PodBuilder("p").node("src").requests(1000, kGi).build();
  b.add(NodeBuilder("src").build()).add(NodeBuilder("t").build()).add(big).add(pod);
  auto snap = b.snapshot();
  framework::CycleState state;
  framework::Handle h(*snap, snap->nodes(), state, nullptr, "p", "x");
  EXPECT_FALSE(framework::nodeFit(h, *pod, *snap->node("t")).fits);
  state.markEvicted(*big);
  EXPECT_TRUE(framework::nodeFit(h, *pod, *snap->node("t")).fits);
}

}  // namespace
}  // namespace kdesched::testing
