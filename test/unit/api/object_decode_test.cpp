#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "test/unit/api/decode_fixtures.h"

namespace kdesched::api {
namespace {

using ::testing::HasSubstr;

TEST(DecodeNodeTest, Node) {
  auto obj = decodeObjectJson(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-7","creationTimestamp":"2024-01-02T03:04:05Z",
      "labels":{"kubernetes.io/hostname":"node-7","topology.kubernetes.io/zone":"eu-west-1a"}},
      "spec":{"podCIDR":"10.244.3.0/24","taints":[{"key":"dedicated","value":"shop","effect":"NoSchedule"},
        {"key":"node.kubernetes.io/unreachable","effect":"NoExecute","timeAdded":"2024-01-02T03:04:05Z"}],"unschedulable":true},
      "status":{"capacity":{"cpu":"8","memory":"32Gi","pods":"110"},"allocatable":{"cpu":"7910m","memory":"31Gi","pods":"110"},
        "conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}})");
  ASSERT_TRUE(obj.isOk()) << obj.error();
  const Node& n = std::get<Node>(*obj);
  EXPECT_EQ(n.name, "node-7");
  EXPECT_EQ(n.nameSym.view(), "node-7");
  EXPECT_EQ(n.labels.get(kLabelHostname), "node-7");
  EXPECT_EQ(n.creationTimestamp, 1704164645);
  EXPECT_EQ(n.taints, (std::vector<Taint>{{"dedicated", "shop", TaintEffect::NoSchedule},
                                          {"node.kubernetes.io/unreachable", "", TaintEffect::NoExecute}}));
  EXPECT_TRUE(n.unschedulable);
  EXPECT_EQ(n.allocatable, (ResourceList{{"cpu", 7910}, {"memory", 31 * kGi}, {"pods", 110000}}));
  EXPECT_EQ(n.readyCondition, false);
  EXPECT_FALSE(n.isReady());
}

TEST(DecodeNodeTest, CapacityWhenNoAllocatableAndReadyStates) {
  Node n;
  ASSERT_TRUE(decodeWith(decodeNode, R"({"metadata":{"name":"n"},"status":{"capacity":{"cpu":"4"},
      "conditions":[{"status":"True","type":"Ready"}]}})",
                         n)
                  .isOk());
  EXPECT_EQ(n.allocatable, (ResourceList{{"cpu", 4000}}));
  EXPECT_EQ(n.readyCondition, true);
  ASSERT_TRUE(
      decodeWith(decodeNode,
                 R"({"metadata":{"name":"n"},"status":{"conditions":[{"type":"DiskPressure","status":"True"}]}})", n)
          .isOk());
  EXPECT_FALSE(n.readyCondition.has_value());
  EXPECT_TRUE(n.isReady());
  Status bad = decodeWith(decodeNode, R"({"spec":{"taints":[{"key":"k","effect":"Maybe"}]}})", n);
  EXPECT_EQ(bad.message(), "spec.taints[0].effect: unknown taint effect \"Maybe\"");
  bad = decodeWith(decodeNode, R"({"spec":{"taints":[{"key":"k"}]}})", n);
  EXPECT_EQ(bad.message(), "spec.taints[0]: missing effect");
}

TEST(DecodePdbTest, PolicyV1) {
  auto obj = decodeObjectJson(R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
      "metadata":{"name":"web","namespace":"shop","generation":3},
      "spec":{"maxUnavailable":"50%","selector":{"matchLabels":{"app":"web"}}},
      "status":{"currentHealthy":4,"desiredHealthy":2,"disruptionsAllowed":2,"expectedPods":4,"observedGeneration":3}})");
  ASSERT_TRUE(obj.isOk()) << obj.error();
  const auto& pdb = std::get<PodDisruptionBudget>(*obj);
  EXPECT_EQ(pdb.key(), "shop/web");
  EXPECT_EQ(pdb.generation, 3);
  EXPECT_EQ(pdb.selector, (LabelSelector{{{"app", "web"}}, {}}));
  EXPECT_FALSE(pdb.minAvailable.has_value());
  EXPECT_EQ(pdb.maxUnavailable, (IntOrPercent{true, 50}));
  EXPECT_TRUE(pdb.hasStatus);
  EXPECT_EQ(pdb.observedGeneration, 3);
  EXPECT_EQ(pdb.disruptionsAllowed, 2);
  EXPECT_EQ(pdb.currentHealthy, 4);
  EXPECT_EQ(pdb.desiredHealthy, 2);
  EXPECT_EQ(pdb.expectedPods, 4);
}

TEST(DecodePdbTest, StatusSelectorAndIntOrPercentVariants) {
  PodDisruptionBudget pdb;
  ASSERT_TRUE(decodeWith(decodePdb, R"({"spec":{"minAvailable":2,"selector":{}},"status":{}})", pdb).isOk());
  EXPECT_EQ(pdb.minAvailable, (IntOrPercent{false, 2}));
  ASSERT_TRUE(pdb.selector.has_value());
  EXPECT_TRUE(pdb.selector->empty());  // empty selects every pod in the namespace
  EXPECT_FALSE(pdb.hasStatus);
  EXPECT_FALSE(pdb.disruptionsAllowed.has_value());

  ASSERT_TRUE(decodeWith(decodePdb, R"({"spec":{"selector":null}})", pdb).isOk());
  EXPECT_FALSE(pdb.selector.has_value());  // unset selects no pod
  EXPECT_FALSE(pdb.hasStatus);

  ASSERT_TRUE(decodeWith(decodePdb, R"({"status":{"disruptionsAllowed":0}})", pdb).isOk());
  EXPECT_TRUE(pdb.hasStatus);
  EXPECT_EQ(pdb.disruptionsAllowed, 0);

  EXPECT_EQ(decodeWith(decodePdb, R"({"spec":{"minAvailable":"half"}})", pdb).message(),
            "spec.minAvailable: invalid int-or-percent \"half\"");
  EXPECT_EQ(decodeWith(decodePdb, R"({"spec":{"maxUnavailable":"5"}})", pdb).message(),
            "spec.maxUnavailable: invalid int-or-percent \"5\"");
  EXPECT_EQ(decodeWith(decodePdb, R"({"spec":{"maxUnavailable":[1]}})", pdb).message(),
            "spec.maxUnavailable: expected integer or percent string, got array");
}

TEST(DecodeOtherKindsTest, NamespacePriorityClassPvc) {
  auto ns = decodeObjectJson(
      R"({"kind":"Namespace","metadata":{"name":"shop","labels":{"team":"a"}},"status":{"phase":"Terminating"}})");
  ASSERT_TRUE(ns.isOk()) << ns.error();
  EXPECT_EQ(std::get<Namespace>(*ns).name, "shop");
  EXPECT_EQ(std::get<Namespace>(*ns).labels, (Labels{{"team", "a"}}));
  EXPECT_TRUE(std::get<Namespace>(*ns).terminating);
  auto active = decodeObjectJson(R"({"kind":"Namespace","metadata":{"name":"x"},"status":{"phase":"Active"}})");
  ASSERT_TRUE(active.isOk());
  EXPECT_FALSE(std::get<Namespace>(*active).terminating);

  auto pc = decodeObjectJson(
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"system-node-critical"},
      "value":2000001000,"globalDefault":false,"preemptionPolicy":"PreemptLowerPriority"})");
  ASSERT_TRUE(pc.isOk()) << pc.error();
  EXPECT_EQ(std::get<PriorityClass>(*pc).name, "system-node-critical");
  EXPECT_EQ(std::get<PriorityClass>(*pc).value, 2000001000);

  auto pvc = decodeObjectJson(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"shop"},
      "spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"fast"}})");
  ASSERT_TRUE(pvc.isOk()) << pvc.error();
  EXPECT_EQ(std::get<PersistentVolumeClaim>(*pvc).ns.view(), "shop");
  EXPECT_EQ(std::get<PersistentVolumeClaim>(*pvc).storageClassName, "fast");
  auto noClass =
      decodeObjectJson(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"d"},"spec":{"storageClassName":null}})");
  ASSERT_TRUE(noClass.isOk());
  EXPECT_FALSE(std::get<PersistentVolumeClaim>(*noClass).storageClassName.has_value());
}

TEST(DecodeObjectJsonTest, KindsAndMalformedInput) {
  EXPECT_EQ(decodeObjectJson(R"({"kind":"PodList","items":[]})").error(), "unknown kind \"PodList\"");
  EXPECT_EQ(decodeObjectJson(R"({"metadata":{}})").error(), "object has no kind");
  EXPECT_THAT(decodeObjectJson("").error(), HasSubstr("invalid JSON"));
  EXPECT_THAT(decodeObjectJson("[1,2]").error(), HasSubstr("expected a JSON object"));
  EXPECT_THAT(decodeObjectJson(R"({"kind":"Pod","metadata":{"name":"x"}} {"kind":"Pod"})").error(),
              HasSubstr("trailing content"));
  EXPECT_THAT(decodeObjectJson(R"({"kind":"Pod","metadata":{"name":"x")").error(), HasSubstr("JSON"));
  EXPECT_EQ(decodeObjectJson(R"({"kind":"Pod","spec":{"priority":"x"}})").error(),
            "Pod: spec.priority: expected integer, got string");
}

TEST(DecodeObjectJsonTest, RandomBytesGiveAnErrorNotACrash) {
  std::mt19937_64 rng(12345);
  std::string junk(1 << 20, '\0');
  for (char& ch : junk) ch = static_cast<char>(rng());
  EXPECT_FALSE(decodeObjectJson(junk).isOk());
  // Mostly-valid JSON-looking noise: braces and quotes in random order.
  const std::string alphabet = R"({}[]":,0123456789 abcdefkindPod)";
  for (char& ch : junk) ch = alphabet[rng() % alphabet.size()];
  EXPECT_FALSE(decodeObjectJson(junk).isOk());
  junk[0] = '{';
  EXPECT_FALSE(decodeObjectJson(junk).isOk());
  // The same noise is not YAML either: unbalanced flow collections and quotes.
  EXPECT_FALSE(yamlStreamToJson(junk).isOk());
}

TEST(DecodeObjectJsonTest, TruncatedPodsNeverCrash) {
  const std::string full(kPodJson);
  for (std::size_t len = 0; len < full.size(); len += 97) {
    auto r = decodeObjectJson(std::string_view(full).substr(0, len));
    EXPECT_FALSE(r.isOk()) << "prefix of " << len << " bytes decoded";
  }
}

}  // namespace
}  // namespace kdesched::api
