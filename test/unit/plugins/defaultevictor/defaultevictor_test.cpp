#include "pkg/plugins/defaultevictor/defaultevictor.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using plugins::defaultevictor::DefaultEvictor;

// Builds the DefaultEvictor from YAML args (a mapping, not indented) through the real registry path.
std::unique_ptr<framework::Plugin> build(const std::string& args, api::Timestamp now = 100000) {
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds::pinned(now);
  ctx.priorityClassValue = [](const std::string& n) -> Result<std::int32_t> {
    if (n == "high") return 1000;
    return Status::error("PriorityClass \"" + n + "\" not found");
  };
  auto p = plugins::defaultevictor::registration().factory(rawArgs(plugins::defaultevictor::kName, args), ctx);
  EXPECT_TRUE(p.isOk()) << (p.isOk() ? "" : p.error());
  return p.isOk() ? std::move(p.value()) : nullptr;
}

struct FilterCase {
  std::string name;
  std::string args;
  std::shared_ptr<const api::Pod> pod;
  bool want;
  std::string reasonContains = "";
};

class FilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(FilterTest, Filter) {
  const auto& c = GetParam();
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build()).add(c.pod);
  b.add(PodBuilder("sibling").ownerUid("ReplicaSet", "rs", "uid-rs").node("n1").build());
  b.add(pdb("covering", "default", selectorOf("app", "covered"), 1));
  auto pvc = std::make_shared<api::PersistentVolumeClaim>();
  pvc->ns = api::Symbol("default");
  pvc->name = "fast-claim";
  pvc->storageClassName = "fast";
  b.add(std::shared_ptr<const api::PersistentVolumeClaim>(pvc));
  auto snap = b.snapshot();
  auto plugin = build(c.args);
  ASSERT_TRUE(plugin);
  auto* f = dynamic_cast<framework::FilterPlugin*>(plugin.get());
  framework::CycleState state;
  framework::Handle h(*snap, snap->nodes(), state, nullptr, "p", "x");
  auto r = f->filter(*c.pod, h);
  EXPECT_EQ(r.ok, c.want) << r.reason;
  if (!c.reasonContains.empty()) {
    EXPECT_NE(r.reason.find(c.reasonContains), std::string::npos) << r.reason;
  }
}

std::vector<FilterCase> filterCases() {
  auto base = [] { return PodBuilder("p").node("n1"); };
  return {
      {"plain ReplicaSet pod passes", "", base().build(), true},
      {"mirror pod refused", "", base().mirror().build(), false, "mirror"},
      {"static pod refused", "", base().staticPod().build(), false, "static"},
      {"terminating refused", "", base().terminating().build(), false, "terminating"},
      {"evict annotation skips every check", "", base().mirror().bare().localStorage().evictAnnotation().build(), true},
      {"system critical refused", "", base().priority(2000000000).build(), false, "system-critical"},
      {"evictSystemCriticalPods lets critical go", "evictSystemCriticalPods: true", base().priority(2000000000).build(),
       true},
      {"priorityThreshold value", "priorityThreshold: {value: 100}", base().priority(100).build(), false, "threshold"},
      {"priorityThreshold value below passes", "priorityThreshold: {value: 100}", base().priority(99).build(), true},
      {"priorityThreshold nil priority passes", "priorityThreshold: {value: 100}", base().build(), true},
      {"priorityThreshold name", "priorityThreshold: {name: high}", base().priority(1000).build(), false, "1000"},
      {"bare pod refused", "", base().bare().build(), false, "no owner"},
      {"failed bare pod refused by default", "", base().bare().phase(api::PodPhase::Failed).build(), false},
      {"failed bare pod allowed when FailedBarePods disabled", "podProtections: {defaultDisabled: [FailedBarePods]}",
       base().bare().phase(api::PodPhase::Failed).build(), true},
      {"running bare pod still refused when FailedBarePods disabled",
       "podProtections: {defaultDisabled: [FailedBarePods]}", base().bare().build(), false},
      {"local storage refused", "", base().localStorage().build(), false, "local storage"},
      {"evictLocalStoragePods", "evictLocalStoragePods: true", base().localStorage().build(), true},
      {"DaemonSet refused", "", base().owner("DaemonSet", "ds").build(), false, "DaemonSet"},
      {"DaemonSetPods disabled", "podProtections: {defaultDisabled: [DaemonSetPods]}",
       base().owner("DaemonSet", "ds").build(), true},
      {"PVC pods pass by default", "", base().pvc("data").build(), true},
      {"PodsWithPVC protects", "podProtections: {extraEnabled: [PodsWithPVC]}", base().pvc("data").build(), false,
       "PersistentVolumeClaim"},
      {"ignorePvcPods legacy", "ignorePvcPods: true", base().pvc("data").build(), false},
      {"protected storage class",
       "podProtections: {extraEnabled: [PodsWithPVC], config: {PodsWithPVC: {protectedStorageClasses: [{name: "
       "fast}]}}}",
       base().pvc("fast-claim").build(), false, "protected storage class fast"},
      {"unknown PVC is protected",
       "podProtections: {extraEnabled: [PodsWithPVC], config: {PodsWithPVC: {protectedStorageClasses: [{name: "
       "fast}]}}}",
       base().pvc("missing").build(), false, "unknown"},
      {"PodsWithoutPDB protects uncovered pods", "podProtections: {extraEnabled: [PodsWithoutPDB]}", base().build(),
       false, "PodDisruptionBudget"},
      {"PodsWithoutPDB lets covered pods go", "podProtections: {extraEnabled: [PodsWithoutPDB]}",
       base().app("covered").build(), true},
      {"labelSelector mismatch", "labelSelector: {matchLabels: {app: x}}", base().app("y").build(), false,
       "labelSelector"},
      {"labelSelector match", "labelSelector: {matchLabels: {app: x}}", base().app("x").build(), true},
      {"minReplicas: owner with 2 pods < 3", "minReplicas: 3", base().ownerUid("ReplicaSet", "rs", "uid-rs").build(),
       false, "minReplicas"},
      {"minReplicas: owner with 2 pods >= 2", "minReplicas: 2", base().ownerUid("ReplicaSet", "rs", "uid-rs").build(),
       true},
      {"minPodAge: too young", "minPodAge: 5m", base().startTime(100000 - 60).build(), false, "minPodAge"},
      {"minPodAge: old enough", "minPodAge: 5m", base().startTime(100000 - 600).build(), true},
      {"minPodAge: not started", "minPodAge: 5m", base().noStartTime().build(), false},
      {"noEvictionPolicy Mandatory", "noEvictionPolicy: Mandatory", base().preferNoEviction().build(), false,
       "prefer-no-eviction"},
      {"noEvictionPolicy Preferred", "noEvictionPolicy: Preferred", base().preferNoEviction().build(), true},
  };
}

INSTANTIATE_TEST_SUITE_P(Table, FilterTest, ::testing::ValuesIn(filterCases()), [](const auto& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(DefaultEvictorPreEviction, NodeFitNeedsAnotherReadyNode) {
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build());
  b.add(NodeBuilder("n2").notReady().build());
  b.add(NodeBuilder("n3").allocatable(50, 8 * kGi).build());  // too little cpu
  auto pod = PodBuilder("p").node("n1").requests(100, kMi).build();
  b.add(pod);
  auto snap = b.snapshot();
  auto plugin = build("nodeFit: true");
  auto* f = dynamic_cast<framework::PreEvictionFilterPlugin*>(plugin.get());
  framework::CycleState state;
  framework::Handle h(*snap, snap->nodes(), state, nullptr, "p", "x");
  EXPECT_FALSE(f->preEvictionFilter(*snap->pods()[0], h).ok);

  ClusterBuilder b2;
  b2.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build()).add(pod);
  auto snap2 = b2.snapshot();
  framework::Handle h2(*snap2, snap2->nodes(), state, nullptr, "p", "x");
  EXPECT_TRUE(f->preEvictionFilter(*snap2->pods()[0], h2).ok);
}

// Upstream loads a nodeSelector that does not parse and fails every PreEvictionFilter on it when
// nodeFit is on: the profile evicts nothing, even a pod that fits elsewhere.
TEST(DefaultEvictorPreEviction, NodeFitWithANodeSelectorThatDoesNotParseRefusesEveryPod) {
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build());
  b.add(PodBuilder("p").node("n1").requests(100, kMi).build());
  auto snap = b.snapshot();
  framework::CycleState state;
  framework::Handle h(*snap, snap->nodes(), state, nullptr, "p", "x");
  auto plugin = build("nodeFit: true\nnodeSelector: 'a in (b'");
  ASSERT_NE(plugin, nullptr);
  auto r = dynamic_cast<framework::PreEvictionFilterPlugin*>(plugin.get())->preEvictionFilter(*snap->pods()[0], h);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason,
            "nodeFit: nodeSelector \"a in (b\" does not parse: invalid selector \"a in (b\": at position 7: "
            "found end of string, expected: ',' or ')'");
  // Without nodeFit nothing reads it.
  auto off = build("nodeSelector: 'a in (b'");
  EXPECT_TRUE(dynamic_cast<framework::PreEvictionFilterPlugin*>(off.get())->preEvictionFilter(*snap->pods()[0], h).ok);
}

TEST(DefaultEvictorPreEviction, NamespaceLabelSelector) {
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build());
  b.add(std::make_shared<const api::Namespace>(api::Namespace{"default", api::Labels{{"env", "dev"}}, false}));
  b.add(PodBuilder("p").node("n1").build());
  b.add(PodBuilder("q", "other").node("n1").build());
  auto snap = b.snapshot();
  auto plugin = build("namespaceLabelSelector: {matchLabels: {env: dev}}");
  auto* f = dynamic_cast<framework::PreEvictionFilterPlugin*>(plugin.get());
  framework::CycleState state;
  framework::Handle h(*snap, snap->nodes(), state, nullptr, "p", "x");
  for (const auto* p : snap->pods()) {
    bool ok = f->preEvictionFilter(*p, h).ok;
    EXPECT_EQ(ok, p->name == "p") << p->key();
  }
}

}  // namespace
}  // namespace kdesched::testing
