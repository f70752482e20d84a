#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "test/unit/api/decode_fixtures.h"

namespace kdesched::api {
namespace {

using ::testing::HasSubstr;

void expectRealisticPod(const Pod& p) {
  EXPECT_EQ(p.name, "web-7d9f8b6c5d-x2k4p");
  EXPECT_EQ(p.ns.view(), "shop");
  EXPECT_EQ(p.uid, "0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33");
  EXPECT_EQ(p.key(), "shop/web-7d9f8b6c5d-x2k4p");
  EXPECT_EQ(p.labels,
            (Labels{{"app.kubernetes.io/name", "web"}, {"pod-template-hash", "7d9f8b6c5d"}, {"tier", "frontend"}}));
  ASSERT_EQ(p.owners.size(), 1u);
  EXPECT_EQ(p.owners[0].apiVersion.view(), "apps/v1");
  EXPECT_EQ(p.owners[0].kind.view(), "ReplicaSet");
  EXPECT_EQ(p.owners[0].name.view(), "web-7d9f8b6c5d");
  EXPECT_EQ(p.owners[0].uid, "5b0c7e3e-8f0e-4a3f-9b1e-2a6f3c1d9e77");
  EXPECT_TRUE(p.owners[0].controller);
  EXPECT_EQ(p.creationTimestamp, 1714637730);  // 2024-05-02T08:15:30Z
  EXPECT_FALSE(p.deletionTimestamp.has_value());
  EXPECT_EQ(p.startTime, 1714637731);
  EXPECT_EQ(p.nodeName.view(), "node-7");
  EXPECT_EQ(p.phase, PodPhase::Running);
  EXPECT_EQ(p.priority, 1000);
  EXPECT_EQ(p.priorityClassName.view(), "shop-critical");
  EXPECT_EQ(p.qos, QosClass::Burstable);
  EXPECT_TRUE(p.ready);
  EXPECT_TRUE(p.annotationPreferNoEviction);
  EXPECT_FALSE(p.annotationEvict);
  EXPECT_FALSE(p.mirror);
  EXPECT_EQ(p.configSource.view(), "api");
  EXPECT_FALSE(p.isStatic());
  EXPECT_TRUE(p.hasLocalStorage);
  EXPECT_FALSE(p.hasResourceClaims);
  EXPECT_EQ(p.pvcClaimNames, (std::vector<std::string>{"web-data", "web-7d9f8b6c5d-x2k4p-scratch"}));

  // app 250m+50m + sidecar 100m = 400m; migrate runs alone: 500m → cpu 500m + 10m overhead.
  // memory: 256+64+32 = 352Mi vs 128Mi → 352Mi + 16Mi. ephemeral-storage only in the app.
  EXPECT_EQ(p.requests, (ResourceList{{"cpu", 510}, {"memory", 368 * kMi}, {"ephemeral-storage", 1 * kGi}}));

  ASSERT_NE(p.scheduling, nullptr);
  const SchedulingConstraints& sc = *p.scheduling;
  EXPECT_EQ(sc.nodeSelector,
            (std::vector<std::pair<std::string, std::string>>{{"disktype", "ssd"}, {"kubernetes.io/os", "linux"}}));
  ASSERT_TRUE(sc.nodeAffinity.has_value());
  ASSERT_TRUE(sc.nodeAffinity->required.has_value());
  const auto& terms = sc.nodeAffinity->required->terms;
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_EQ(terms[0].matchExpressions,
            (std::vector<NodeSelectorRequirement>{
                {"topology.kubernetes.io/zone", NodeSelectorOp::In, {"eu-west-1a", "eu-west-1b"}},
                {"node.kubernetes.io/cpus", NodeSelectorOp::Gt, {"4"}}}));
  EXPECT_TRUE(terms[0].matchFields.empty());
  EXPECT_EQ(terms[1].matchFields,
            (std::vector<NodeSelectorRequirement>{{"metadata.name", NodeSelectorOp::In, {"node-7"}}}));
  ASSERT_EQ(sc.nodeAffinity->preferred.size(), 1u);
  EXPECT_EQ(sc.nodeAffinity->preferred[0].weight, 20);
  EXPECT_EQ(sc.nodeAffinity->preferred[0].preference.matchExpressions[0].key, "disktype");
  EXPECT_FALSE(sc.podAffinity.has_value());
  ASSERT_TRUE(sc.podAntiAffinity.has_value());
  ASSERT_EQ(sc.podAntiAffinity->required.size(), 1u);
  const PodAffinityTerm& anti = sc.podAntiAffinity->required[0];
  ASSERT_TRUE(anti.labelSelector.has_value());
  EXPECT_EQ(*anti.labelSelector,
            (LabelSelector{{{"tier", "frontend"}}, {{"app.kubernetes.io/name", LabelSelectorOp::In, {"web"}}}}));
  EXPECT_EQ(anti.topologyKey, "kubernetes.io/hostname");
  EXPECT_EQ(anti.matchLabelKeys, std::vector<std::string>{"pod-template-hash"});
  EXPECT_FALSE(anti.namespaceSelector.has_value());
  ASSERT_EQ(sc.podAntiAffinity->preferred.size(), 1u);
  EXPECT_EQ(sc.podAntiAffinity->preferred[0].weight, 50);
  ASSERT_TRUE(sc.podAntiAffinity->preferred[0].term.namespaceSelector.has_value());
  EXPECT_TRUE(sc.podAntiAffinity->preferred[0].term.namespaceSelector->empty());
  EXPECT_TRUE(sc.hasRequiredAntiAffinity());
  EXPECT_EQ(sc.tolerations,
            (std::vector<Toleration>{
                {"node.kubernetes.io/not-ready", TolerationOp::Exists, "", TaintEffect::NoExecute, 300},
                {"node.kubernetes.io/unreachable", TolerationOp::Exists, "", TaintEffect::NoExecute, 300},
                {"dedicated", TolerationOp::Equal, "shop", TaintEffect::None, std::nullopt},
                {"", TolerationOp::Exists, "", TaintEffect::None, std::nullopt}}));
  ASSERT_EQ(sc.topologySpreadConstraints.size(), 1u);
  const TopologySpreadConstraint& tsc = sc.topologySpreadConstraints[0];
  EXPECT_EQ(tsc.maxSkew, 2);
  EXPECT_EQ(tsc.topologyKey, "topology.kubernetes.io/zone");
  EXPECT_EQ(tsc.whenUnsatisfiable, UnsatisfiableAction::ScheduleAnyway);
  EXPECT_EQ(tsc.minDomains, 3);
  EXPECT_EQ(tsc.nodeAffinityPolicy, InclusionPolicy::Honor);
  EXPECT_EQ(tsc.nodeTaintsPolicy, InclusionPolicy::Ignore);
  EXPECT_EQ(tsc.matchLabelKeys, std::vector<std::string>{"pod-template-hash"});
  EXPECT_EQ(tsc.labelSelector, (LabelSelector{{{"app.kubernetes.io/name", "web"}}, {}}));
}

TEST(DecodePodTest, RealisticKubectlJson) {
  auto pod = podFromJson(kPodJson);
  ASSERT_TRUE(pod.isOk()) << pod.error();
  expectRealisticPod(*pod);
}

TEST(DecodePodTest, RealisticKubectlYaml) {
  auto pod = podFromYaml(kPodYaml);
  ASSERT_TRUE(pod.isOk()) << pod.error();
  expectRealisticPod(*pod);
  // Decoded twice from different texts, the identical constraint block is one allocation.
  auto fromJson = podFromJson(kPodJson);
  ASSERT_TRUE(fromJson.isOk());
  EXPECT_EQ(pod->scheduling.get(), fromJson->scheduling.get());
}

TEST(DecodePodTest, ThroughDecodeObjectJson) {
  auto obj = decodeObjectJson(kPodJson);
  ASSERT_TRUE(obj.isOk()) << obj.error();
  ASSERT_TRUE(std::holds_alternative<Pod>(*obj));
  expectRealisticPod(std::get<Pod>(*obj));
}

TEST(DecodePodTest, PodsWithTheSameConstraintsShareOneBlock) {
  const std::string a =
      R"({"metadata":{"name":"a"},"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["z1"]}]}]}}},
      "tolerations":[{"key":"k","operator":"Exists"}]}})";
  std::string b = a;
  b.replace(b.find("\"a\""), 3, "\"b\"");
  std::string other = a;
  other.replace(other.find("z1"), 2, "z2");
  auto pa = podFromJson(a), pb = podFromJson(b), po = podFromJson(other);
  ASSERT_TRUE(pa.isOk() && pb.isOk() && po.isOk());
  EXPECT_EQ(pb->name, "b");
  EXPECT_EQ(pa->scheduling.get(), pb->scheduling.get());
  EXPECT_NE(pa->scheduling.get(), po->scheduling.get());
  // A pod without any constraints still gets a (shared) block.
  auto bare1 = podFromJson(R"({"metadata":{"name":"x"}})");
  auto bare2 = podFromJson(R"({"spec":{"nodeName":"n"}})");
  ASSERT_TRUE(bare1.isOk() && bare2.isOk());
  ASSERT_NE(bare1->scheduling, nullptr);
  EXPECT_EQ(bare1->scheduling.get(), bare2->scheduling.get());
}

TEST(DecodePodTest, PodsWithTheSameRequestsShareOneList) {
  const auto pod = [](std::string_view name, std::string_view cpu) {
    return podFromJson(std::string(R"({"metadata":{"name":")") + std::string(name) +
                       R"("},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":")" + std::string(cpu) +
                       R"(","memory":"64Mi"}}}]}})");
  };
  auto a = pod("a", "100m"), b = pod("b", "0.1"), other = pod("o", "200m");
  ASSERT_TRUE(a.isOk() && b.isOk() && other.isOk());
  EXPECT_EQ(&a->requests.list(), &b->requests.list());
  EXPECT_NE(&a->requests.list(), &other->requests.list());
  EXPECT_EQ(other->requests.get(kCpu()), 200);
}

TEST(DecodePodTest, FieldsInAnyOrder) {
  // status first, name last: the ephemeral PVC name still uses the pod name.
  auto pod = podFromJson(R"({"status":{"phase":"Pending","conditions":[{"type":"Ready","status":"False"}]},
      "spec":{"volumes":[{"ephemeral":{"volumeClaimTemplate":{}},"name":"tmp"},{"hostPath":{"path":"/x"},"name":"h"}]},
      "metadata":{"namespace":"ns1","name":"late"}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->pvcClaimNames, std::vector<std::string>{"late-tmp"});
  EXPECT_TRUE(pod->hasLocalStorage);
  EXPECT_FALSE(pod->ready);
  EXPECT_EQ(pod->phase, PodPhase::Pending);
}

TEST(DecodePodTest, LimitsDefaultRequestsAndQosIsComputedWithoutStatus) {
  auto pod = podFromJson(R"({"metadata":{"name":"g"},"spec":{"containers":[
      {"name":"c","resources":{"limits":{"cpu":"500m","memory":"1Gi"}}},
      {"name":"d","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1"}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->requests, (ResourceList{{"cpu", 1500}, {"memory", 2 * kGi}}));
  EXPECT_EQ(pod->qos, QosClass::Guaranteed);

  auto burst = podFromJson(
      R"({"spec":{"containers":[{"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"100m"}}}]}})");
  ASSERT_TRUE(burst.isOk());
  EXPECT_EQ(burst->qos, QosClass::Burstable);
  EXPECT_EQ(burst->requests, (ResourceList{{"cpu", 100}, {"memory", 1 * kGi}}));

  auto best = podFromJson(R"({"spec":{"containers":[{"name":"c"}]}})");
  ASSERT_TRUE(best.isOk());
  EXPECT_EQ(best->qos, QosClass::BestEffort);
  EXPECT_TRUE(best->requests.empty());
}

TEST(DecodePodTest, StatusQosClassWinsOverComputation) {
  auto pod = podFromJson(
      R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}]},"status":{"qosClass":"Guaranteed"}})");
  ASSERT_TRUE(pod.isOk());
  EXPECT_EQ(pod->qos, QosClass::Guaranteed);
}

TEST(DecodePodTest, QuantitiesAsJsonNumbersAndNulls) {
  auto pod = podFromJson(R"({"spec":{"containers":[{"resources":{"requests":{"cpu":0.5,"memory":1e3,"example.com/foo":2,
      "nvidia.com/gpu":null,"ephemeral-storage":" 1Gi "}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->requests, (ResourceList{{"cpu", 500},
                                         {"memory", 1000000},
                                         {"example.com/foo", 2000},
                                         {"nvidia.com/gpu", 0},
                                         {"ephemeral-storage", 1 * kGi}}));
}

TEST(DecodePodTest, AnnotationsAndMirrorPods) {
  auto pod = podFromJson(
      R"({"metadata":{"annotations":{"kubernetes.io/config.mirror":"abc","kubernetes.io/config.source":"file",
      "descheduler.alpha.kubernetes.io/evict":"true","other":"x"},"deletionTimestamp":"2024-01-02T03:04:05Z"}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_TRUE(pod->mirror);
  EXPECT_TRUE(pod->annotationEvict);
  EXPECT_FALSE(pod->annotationPreferNoEviction);
  EXPECT_EQ(pod->configSource.view(), "file");
  EXPECT_TRUE(pod->isStatic());
  EXPECT_EQ(pod->deletionTimestamp, 1704164645);
  EXPECT_TRUE(pod->isTerminating());
}

TEST(DecodePodTest, NullsMeanAbsent) {
  auto pod =
      podFromJson(R"({"metadata":{"labels":null,"annotations":null,"ownerReferences":null,"deletionTimestamp":null},
      "spec":{"priority":null,"affinity":{"nodeAffinity":null,"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":null}},
      "tolerations":null,"volumes":[{"name":"v","emptyDir":null}],"resourceClaims":[{"name":"gpu"}]},"status":null})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_TRUE(pod->labels.empty());
  EXPECT_FALSE(pod->priority.has_value());
  EXPECT_FALSE(pod->constraints().nodeAffinity.has_value());
  ASSERT_TRUE(pod->constraints().podAffinity.has_value());
  EXPECT_TRUE(pod->constraints().podAffinity->required.empty());
  EXPECT_FALSE(pod->hasLocalStorage);
  EXPECT_TRUE(pod->hasResourceClaims);
}

struct DecodeErrorCase {
  const char* name;
  const char* json;
  const char* error;
};

class DecodePodErrorTest : public ::testing::TestWithParam<DecodeErrorCase> {};

TEST_P(DecodePodErrorTest, NamesTheFieldPath) {
  const auto& c = GetParam();
  auto pod = podFromJson(c.json);
  ASSERT_FALSE(pod.isOk()) << c.name;
  EXPECT_EQ(pod.error(), c.error) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, DecodePodErrorTest,
    ::testing::Values(
        DecodeErrorCase{"bad quantity", R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"12x"}}}]}})",
                        "spec.containers[0].resources.requests.cpu: invalid quantity \"12x\""},
        DecodeErrorCase{"bad quantity in second init container",
                        R"({"spec":{"initContainers":[{},{"resources":{"limits":{"memory":"1 Gi"}}}]}})",
                        "spec.initContainers[1].resources.limits.memory: invalid quantity \"1 Gi\""},
        DecodeErrorCase{"negative quantity beyond int64 milli", R"({"spec":{"overhead":{"cpu":"-1E"}}})",
                        "spec.overhead.cpu: must be greater than or equal to 0, got a negative quantity for cpu"},
        DecodeErrorCase{"quantity of wrong type", R"({"spec":{"overhead":{"cpu":true}}})",
                        "spec.overhead.cpu: expected quantity, got boolean"},
        DecodeErrorCase{
            "bad node selector operator",
            R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Maybe","values":["x"]}]}]}}}}})",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
            "matchExpressions[0].operator: unknown operator \"Maybe\""},
        DecodeErrorCase{
            "bad label selector operator",
            R"({"spec":{"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}}]}}}})",
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector."
            "matchExpressions[0].operator: unknown operator \"Gt\""},
        DecodeErrorCase{
            "missing operator",
            R"({"spec":{"topologySpreadConstraints":[{"labelSelector":{"matchExpressions":[{"key":"a"}]}}]}})",
            "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0]: missing operator"},
        DecodeErrorCase{"string where a number is expected", R"({"spec":{"priority":"high"}})",
                        "spec.priority: expected integer, got string"},
        DecodeErrorCase{"float where an integer is expected", R"({"spec":{"priority":1.5}})",
                        "spec.priority: expected integer, got 1.5"},
        DecodeErrorCase{"int32 overflow", R"({"spec":{"priority":3000000000}})",
                        "spec.priority: integer 3000000000 out of int32 range"},
        DecodeErrorCase{"number where a string is expected", R"({"metadata":{"name":42}})",
                        "metadata.name: expected string, got number"},
        DecodeErrorCase{"label value not a string", R"({"metadata":{"labels":{"version":1.0}}})",
                        "metadata.labels.version: expected string, got number"},
        DecodeErrorCase{"labels not an object", R"({"metadata":{"labels":["a"]}})",
                        "metadata.labels: expected object, got array"},
        DecodeErrorCase{"containers not an array", R"({"spec":{"containers":{"name":"c"}}})",
                        "spec.containers: expected array, got object"},
        DecodeErrorCase{"bool of wrong type", R"({"metadata":{"ownerReferences":[{"controller":"yes"}]}})",
                        "metadata.ownerReferences[0].controller: expected boolean, got string"},
        DecodeErrorCase{"toleration effect", R"({"spec":{"tolerations":[{"key":"k","effect":"Sometimes"}]}})",
                        "spec.tolerations[0].effect: unknown effect \"Sometimes\""},
        DecodeErrorCase{"toleration operator of wrong type", R"({"spec":{"tolerations":[{"key":"k","operator":5}]}})",
                        "spec.tolerations[0].operator: expected string, got number"},
        DecodeErrorCase{"spread action", R"({"spec":{"topologySpreadConstraints":[{"whenUnsatisfiable":"Whatever"}]}})",
                        "spec.topologySpreadConstraints[0].whenUnsatisfiable: unknown whenUnsatisfiable \"Whatever\""},
        DecodeErrorCase{"bad timestamp", R"({"metadata":{"creationTimestamp":"yesterday"}})",
                        "metadata.creationTimestamp: invalid RFC 3339 timestamp \"yesterday\""},
        DecodeErrorCase{"spec not an object", R"({"spec":"none"})", "spec: expected object, got string"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

TEST(DecodePodTest, KeepsIdentityDecodedBeforeAnError) {
  Pod pod;
  Status s = decodeWith(decodePod, R"({"metadata":{"name":"broken","namespace":"ns"},"spec":{"priority":"x"}})", pod);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(pod.key(), "ns/broken");
  EXPECT_NE(pod.scheduling, nullptr);
}

}  // namespace
}  // namespace kdesched::api
