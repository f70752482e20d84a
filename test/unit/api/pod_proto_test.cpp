// The protobuf pod decoder against the JSON one: the same pod in both encodings decodes to the same
// object (every field pod_decode.cpp reads), invalid values fail with the JSON decoder's words, and
// malformed wire data fails cleanly. Field numbers as in k8s.io/api core/v1 generated.proto.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "pkg/api/decode_proto.h"
#include "test/unit/api/decode_fixtures.h"
#include "test/unit/testing/pod_dump.h"
#include "test/unit/testing/proto_writer.h"

namespace kdesched::api {
namespace {

using kdesched::testing::dumpPod;
using kdesched::testing::Proto;
using ::testing::HasSubstr;

Proto nodeReq(std::string_view key, std::string_view op, std::initializer_list<std::string_view> values) {
  Proto p;
  p.str(1, key).str(2, op);
  for (auto v : values) p.str(3, v);
  return p;
}

Proto labelReq(std::string_view key, std::string_view op, std::initializer_list<std::string_view> values) {
  return nodeReq(key, op, values);  // LabelSelectorRequirement has the same numbers
}

Proto toleration(std::string_view key, std::string_view op, std::string_view value, std::string_view effect,
                 std::optional<std::int64_t> seconds = std::nullopt) {
  Proto p;
  p.str(1, key).str(2, op).str(3, value).str(4, effect);
  if (seconds) p.varint(5, static_cast<std::uint64_t>(*seconds));
  return p;
}

Proto container(std::string_view name, std::string_view image, const Proto& resources) {
  return Proto().str(1, name).str(2, image).msg(8, resources).str(13, "/dev/termination-log").str(14, "IfNotPresent");
}

// decode_fixtures.h's kPodJson, as the API server writes it in protobuf (fields kdesched does not
// read included, to show they are skipped), in its three parts; realisticPod() puts them together.
Proto realisticMeta() {
  Proto meta;
  meta.str(1, "web-7d9f8b6c5d-x2k4p")
      .str(2, "web-7d9f8b6c5d-")
      .str(3, "shop")
      .str(4, "")
      .str(5, "0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33")
      .str(6, "123456")
      .varint(7, 0)
      .time(8, 1714637730)
      .entry(11, "app.kubernetes.io/name", "web")
      .entry(11, "pod-template-hash", "7d9f8b6c5d")
      .entry(11, "tier", "frontend")
      .entry(12, "checksum/config", "3f1c2a")
      .entry(12, "descheduler.alpha.kubernetes.io/prefer-no-eviction", "")
      .entry(12, "kubernetes.io/config.source", "api")
      .entry(12, "kubectl.kubernetes.io/restartedAt", "2024-05-01T10:00:00Z")
      .msg(13, Proto()
                   .str(1, "ReplicaSet")
                   .str(3, "web-7d9f8b6c5d")
                   .str(4, "5b0c7e3e-8f0e-4a3f-9b1e-2a6f3c1d9e77")
                   .str(5, "apps/v1")
                   .varint(6, 1)
                   .varint(7, 1))
      .msg(17, Proto().str(1, "kube-controller-manager").str(2, "Update"));
  return meta;
}

Proto realisticAffinity() {
  Proto affinity;
  affinity.msg(
      1, Proto()
             .msg(1, Proto()
                         .msg(1, Proto()
                                     .msg(1, nodeReq("topology.kubernetes.io/zone", "In", {"eu-west-1a", "eu-west-1b"}))
                                     .msg(1, nodeReq("node.kubernetes.io/cpus", "Gt", {"4"})))
                         .msg(1, Proto().msg(2, nodeReq("metadata.name", "In", {"node-7"}))))
             .msg(2, Proto().i32(1, 20).msg(2, Proto().msg(1, nodeReq("disktype", "In", {"ssd"})))));
  affinity.msg(
      3,
      Proto()
          .msg(1,
               Proto()
                   .msg(1,
                        Proto().entry(1, "tier", "frontend").msg(2, labelReq("app.kubernetes.io/name", "In", {"web"})))
                   .str(3, "kubernetes.io/hostname")
                   .str(5, "pod-template-hash"))
          .msg(2, Proto().i32(1, 50).msg(2, Proto()
                                                .msg(1, Proto().entry(1, "app.kubernetes.io/name", "web"))
                                                .str(3, "topology.kubernetes.io/zone")
                                                .msg(4, Proto()))));
  return affinity;
}

Proto realisticSpec() {
  Proto spec;
  spec.msg(1, Proto().str(1, "cache").msg(2, Proto().msg(2, Proto())))
      .msg(1, Proto().str(1, "data").msg(2, Proto().msg(10, Proto().str(1, "web-data").varint(2, 0))))
      .msg(1, Proto().str(1, "config").msg(2, Proto().msg(19, Proto().str(1, "web-config").varint(3, 420))))
      .msg(1, Proto().str(1, "scratch").msg(2, Proto().msg(29, Proto().msg(1, Proto()))))
      .msg(1, Proto().str(1, "kube-api-access-8x2lq").msg(2, Proto().msg(26, Proto().varint(2, 420))))
      .msg(20, container("migrate", "registry.example.com/migrate:1.4.2",
                         Proto().quantity(2, "cpu", "500m").quantity(2, "memory", "128Mi")))
      .msg(20, container("proxy", "registry.example.com/proxy:2.1",
                         Proto().quantity(2, "cpu", "100m").quantity(2, "memory", "32Mi"))
                   .str(24, "Always"))
      .msg(2, container("web", "registry.example.com/web:1.4.2",
                        Proto()
                            .quantity(1, "cpu", "1")
                            .quantity(1, "memory", "512Mi")
                            .quantity(2, "cpu", "250m")
                            .quantity(2, "ephemeral-storage", "1Gi")
                            .quantity(2, "memory", "256Mi"))
                  .msg(7, Proto().str(1, "LOG_LEVEL").str(2, "info")))
      .msg(2, container("metrics", "registry.example.com/metrics:0.9",
                        Proto().quantity(2, "cpu", "50m").quantity(2, "memory", "64Mi")))
      .str(3, "Always")
      .varint(4, 30)
      .str(6, "ClusterFirst")
      .entry(7, "disktype", "ssd")
      .entry(7, "kubernetes.io/os", "linux")
      .str(8, "web")
      .str(10, "node-7")
      .msg(14, Proto())
      .msg(18, realisticAffinity())
      .str(19, "default-scheduler")
      .msg(22, toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300))
      .msg(22, toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300))
      .msg(22, toleration("dedicated", "Equal", "shop", ""))
      .msg(22, toleration("", "Exists", "", ""))
      .str(24, "shop-critical")
      .i32(25, 1000)
      .varint(30, 1)
      .str(31, "PreemptLowerPriority")
      .quantity(32, "cpu", "10m")
      .quantity(32, "memory", "16Mi")
      .msg(33, Proto()
                   .i32(1, 2)
                   .str(2, "topology.kubernetes.io/zone")
                   .str(3, "ScheduleAnyway")
                   .msg(4, Proto().entry(1, "app.kubernetes.io/name", "web"))
                   .i32(5, 3)
                   .str(6, "Honor")
                   .str(7, "Ignore")
                   .str(8, "pod-template-hash"));
  return spec;
}

Proto realisticStatus() {
  auto condition = [](std::string_view type, std::int64_t at) {
    return Proto().str(1, type).str(2, "True").msg(3, Proto()).time(4, at).str(5, "").str(6, "");
  };
  Proto status;
  status.str(1, "Running")
      .msg(2, condition("Initialized", 1714637740))
      .msg(2, condition("Ready", 1714637752))
      .msg(2, condition("PodScheduled", 1714637730))
      .str(3, "")
      .str(4, "")
      .str(5, "10.0.3.17")
      .str(6, "10.244.3.21")
      .time(7, 1714637731)
      .msg(8, Proto()
                  .str(1, "web")
                  .msg(2, Proto().msg(2, Proto().time(1, 1714637750)))
                  .msg(3, Proto())
                  .varint(4, 1)
                  .i32(5, 0)
                  .str(6, "registry.example.com/web:1.4.2")
                  .str(8, "containerd://abc"))
      .str(9, "Burstable");
  return status;
}

Proto realisticPod() { return Proto().msg(1, realisticMeta()).msg(2, realisticSpec()).msg(3, realisticStatus()); }

TEST(PodProtoTest, RealisticPodDecodesAsItsJson) {
  Pod fromProto;
  ASSERT_TRUE(decodePodProto(realisticPod().bytes(), fromProto).isOk());
  auto fromJson = podFromJson(kPodJson);
  ASSERT_TRUE(fromJson.isOk()) << fromJson.error();
  EXPECT_EQ(dumpPod(fromProto), dumpPod(*fromJson));
  // A few fields by value, so a field both decoders dropped would not pass unseen.
  EXPECT_EQ(fromProto.requests, (ResourceList{{"cpu", 510}, {"memory", 368 * kMi}, {"ephemeral-storage", 1 * kGi}}));
  EXPECT_EQ(fromProto.pvcClaimNames, (std::vector<std::string>{"web-data", "web-7d9f8b6c5d-x2k4p-scratch"}));
  EXPECT_EQ(fromProto.creationTimestamp, 1714637730);
  EXPECT_TRUE(fromProto.ready);
  EXPECT_TRUE(fromProto.annotationPreferNoEviction);
  EXPECT_EQ(fromProto.constraints().topologySpreadConstraints.at(0).minDomains, 3);
  // The same constraints are one shared block, whichever wire they came from.
  EXPECT_EQ(fromProto.scheduling.get(), fromJson->scheduling.get());
}

// A pod with what the realistic one lacks: terminating, a mirror pod's annotations, every kind of
// container status, resize status, hostPath, resource claims, pod affinity, a deleted zero time,
// scheduling gates and a nominated node.
constexpr std::string_view kStatusPodJson = R"({
  "metadata": {"name": "batch-1", "namespace": "jobs", "uid": "u-1",
    "creationTimestamp": "2024-05-02T08:00:00Z", "deletionTimestamp": "2024-05-02T09:00:00Z",
    "annotations": {"descheduler.alpha.kubernetes.io/evict": "true", "kubernetes.io/config.mirror": "x",
                    "kubernetes.io/config.source": "file"},
    "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "n-1"}]},
  "spec": {"nodeName": "n1", "priority": -5,
    "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "namespaces": ["a", "b"],
       "topologyKey": "zone", "mismatchLabelKeys": ["rev"]}]},
      "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}}]}},
    "tolerations": [{"key": "k", "operator": "Lt", "value": "5", "effect": "NoSchedule"},
                    {"key": "k2", "operator": "Later", "effect": "PreferNoSchedule"}],
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "host", "whenUnsatisfiable": "DoNotSchedule"}],
    "containers": [{"name": "main", "image": "busybox", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}],
    "initContainers": [{"name": "side", "image": "envoy", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "300m"}}}],
    "volumes": [{"name": "h", "hostPath": {"path": "/var"}}],
    "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
    "schedulingGates": [{"name": "example.com/quota"}]},
  "status": {"phase": "Failed", "reason": "Evicted", "nominatedNodeName": "n2",
    "conditions": [{"type": "Ready", "status": "False", "reason": "PodFailed"},
                   {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
    "containerStatuses": [{"name": "main", "restartCount": 7,
       "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
       "allocatedResources": {"cpu": "1500m"}, "resources": {"requests": {"cpu": "1"}}}],
    "initContainerStatuses": [{"name": "side", "restartCount": 2, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
       "resources": {"requests": {"cpu": "200m"}}}],
    "ephemeralContainerStatuses": [{"name": "debug", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}}]}
})";

Proto statusPod() {
  Proto meta;
  meta.str(1, "batch-1")
      .str(3, "jobs")
      .str(5, "u-1")
      .time(8, 1714636800)
      .time(9, 1714640400)
      .entry(12, "descheduler.alpha.kubernetes.io/evict", "true")
      .entry(12, "kubernetes.io/config.mirror", "x")
      .entry(12, "kubernetes.io/config.source", "file")
      .msg(13, Proto().str(1, "Node").str(3, "n1").str(4, "n-1").str(5, "v1"));
  Proto affinity;
  affinity.msg(1, Proto().msg(2, Proto().i32(1, 1).msg(2, Proto().msg(1, nodeReq("x", "DoesNotExist", {})))))
      .msg(2, Proto().msg(1, Proto()
                                 .msg(1, Proto().msg(2, labelReq("app", "Exists", {})))
                                 .str(2, "a")
                                 .str(2, "b")
                                 .str(3, "zone")
                                 .str(6, "rev")));
  Proto spec;
  spec.msg(1, Proto().str(1, "h").msg(2, Proto().msg(1, Proto().str(1, "/var"))))
      .msg(
          2,
          Proto().str(1, "main").str(2, "busybox").msg(8, Proto().quantity(1, "cpu", "2").quantity(1, "memory", "1Gi")))
      .str(10, "n1")
      .msg(18, affinity)
      .msg(20, Proto().str(1, "side").str(2, "envoy").msg(8, Proto().quantity(2, "cpu", "300m")).str(24, "Always"))
      .msg(22, toleration("k", "Lt", "5", "NoSchedule"))
      .msg(22, toleration("k2", "Later", "", "PreferNoSchedule"))
      .i32(25, -5)
      .msg(33, Proto().i32(1, 1).str(2, "host").str(3, "DoNotSchedule"))
      .msg(38, Proto().str(1, "example.com/quota"))
      .msg(39, Proto().str(1, "gpu").str(3, "gpu-claim"));
  Proto status;
  status.str(1, "Failed")
      .msg(2, Proto().str(1, "Ready").str(2, "False").msg(4, Proto()).str(5, "PodFailed"))
      .msg(2, Proto().str(1, "PodResizePending").str(2, "True").str(5, "Infeasible"))
      .str(4, "Evicted")
      .msg(8, Proto()
                  .str(1, "main")
                  .msg(2, Proto().msg(3, Proto().i32(1, 137).str(3, "OOMKilled")))
                  .i32(5, 7)
                  .quantity(10, "cpu", "1500m")
                  .msg(11, Proto().quantity(2, "cpu", "1")))
      .msg(10, Proto()
                   .str(1, "side")
                   .msg(2, Proto().msg(1, Proto().str(1, "CrashLoopBackOff")))
                   .i32(5, 2)
                   .msg(11, Proto().quantity(2, "cpu", "200m")))
      .str(11, "n2")
      .msg(13, Proto().str(1, "debug").msg(2, Proto().msg(3, Proto())).i32(5, 0));
  return Proto().msg(1, meta).msg(2, spec).msg(3, status);
}

TEST(PodProtoTest, StatusAndTheRestDecodeAsTheirJson) {
  Pod fromProto;
  ASSERT_TRUE(decodePodProto(statusPod().bytes(), fromProto).isOk());
  auto fromJson = podFromJson(kStatusPodJson);
  ASSERT_TRUE(fromJson.isOk()) << fromJson.error();
  EXPECT_EQ(dumpPod(fromProto), dumpPod(*fromJson));
  EXPECT_EQ(fromProto.deletionTimestamp, 1714640400);
  EXPECT_TRUE(fromProto.mirror);
  EXPECT_TRUE(fromProto.annotationEvict);
  EXPECT_TRUE(fromProto.hasLocalStorage);
  EXPECT_TRUE(fromProto.hasResourceClaims);
  EXPECT_TRUE(fromProto.schedulingGated);
  EXPECT_EQ(fromProto.status().nominatedNodeName.view(), "n2");
  EXPECT_EQ(fromProto.priority, -5);
  EXPECT_EQ(fromProto.status().containers.size(), 3u);
  EXPECT_EQ(fromProto.constraints().tolerations.at(1).op, TolerationOp::Unknown);
}

// A zero metav1.Time is written as an empty message: unset, as JSON's null.
TEST(PodProtoTest, AnEmptyTimeIsUnset) {
  Pod pod;
  ASSERT_TRUE(decodePodProto(Proto().msg(1, Proto().str(1, "p").msg(8, Proto())).bytes(), pod).isOk());
  EXPECT_FALSE(pod.creationTimestamp.has_value());
}

Status decodeSpec(const Proto& spec, Pod& pod) {
  return decodePodProto(Proto().msg(1, Proto().str(1, "p").str(3, "ns")).msg(2, spec).bytes(), pod);
}

struct InvalidCase {
  const char* name;
  Proto spec;
  const char* error;
};

TEST(PodProtoTest, InvalidValuesFailAsInJson) {
  const InvalidCase cases[] = {
      {.name = "quantity",
       .spec = Proto().msg(2, Proto().str(1, "c").msg(8, Proto().quantity(2, "cpu", "1x"))),
       .error = "spec.containers[0].resources.requests.cpu: invalid quantity \"1x\""},
      {.name = "negative request",
       .spec =
           Proto().msg(2, Proto().str(1, "c")).msg(2, Proto().str(1, "d").msg(8, Proto().quantity(1, "memory", "-1"))),
       .error = "spec.containers[1].resources.limits.memory: must be greater than or equal to 0, got a negative "
                "quantity for memory"},
      {.name = "overhead",
       .spec = Proto().quantity(32, "cpu", "abc"),
       .error = "spec.overhead.cpu: invalid quantity \"abc\""},
      {.name = "toleration effect",
       .spec = Proto().msg(22, toleration("k", "Exists", "", "Sometimes")),
       .error = "spec.tolerations[0].effect: unknown effect \"Sometimes\""},
      {.name = "node selector operator",
       .spec =
           Proto().msg(18, Proto().msg(1, Proto().msg(1, Proto().msg(1, Proto().msg(1, nodeReq("k", "Near", {})))))),
       .error = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                "matchExpressions[0].operator: unknown operator \"Near\""},
      {.name = "missing operator",
       .spec = Proto().msg(18, Proto().msg(1, Proto().msg(1, Proto().msg(1, Proto().msg(2, Proto().str(1, "k")))))),
       .error = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                "matchFields[0]: missing operator"},
      {.name = "label selector operator",
       .spec = Proto().msg(
           33, Proto().i32(1, 1).str(2, "z").str(3, "DoNotSchedule").msg(4, Proto().msg(2, labelReq("a", "Near", {})))),
       .error = "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator: "},
      {.name = "whenUnsatisfiable",
       .spec = Proto().msg(33, Proto().i32(1, 1).str(2, "z").str(3, "")),
       .error = "spec.topologySpreadConstraints[0].whenUnsatisfiable: unknown whenUnsatisfiable \"\""},
      {.name = "spread policy",
       .spec = Proto().msg(33, Proto().i32(1, 1).str(2, "z").str(3, "DoNotSchedule").str(7, "Sometimes")),
       .error = "spec.topologySpreadConstraints[0].nodeTaintsPolicy: unknown policy \"Sometimes\""},
      {.name = "wrong wire type",
       .spec = Proto().varint(10, 7),
       .error = "spec.nodeName: malformed protobuf: field 10 has wire type varint, expected length-delimited"},
  };
  for (const auto& c : cases) {
    Pod pod;
    const Status s = decodeSpec(c.spec, pod);
    ASSERT_FALSE(s.isOk()) << c.name;
    EXPECT_THAT(s.message(), HasSubstr(c.error)) << c.name;
    // The JSON decoder's messages start at the field too (no prefix): the reflector adds the key.
    EXPECT_EQ(s.message().rfind("spec.", 0), 0u) << c.name << ": " << s.message();
  }
}

TEST(PodProtoTest, NegativeRestartCountFails) {
  Pod pod;
  const Status s = decodePodProto(
      Proto().msg(1, Proto().str(1, "p")).msg(3, Proto().msg(8, Proto().str(1, "c").i32(5, -1))).bytes(), pod);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "status.containerStatuses[0].restartCount: restartCount -1 is negative");
}

// Fields of every wire type kdesched does not know are skipped, at every level.
TEST(PodProtoTest, UnknownFieldsAreSkipped) {
  Proto pod = realisticPod();
  pod.varint(99, 12345).fixed32(98, 7).fixed64(97, 8).str(96, "future").msg(95, Proto().str(1, "x"));
  Proto wrapped;
  wrapped.raw(pod.bytes()).raw(std::string("\x8b\x06\x08\x01\x8c\x06", 6));  // group 97 {varint 1 = 1}
  Pod withUnknown, plain;
  ASSERT_TRUE(decodePodProto(realisticPod().bytes(), plain).isOk());
  const Status s = decodePodProto(wrapped.bytes(), withUnknown);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(dumpPod(withUnknown), dumpPod(plain));
}

// Cut anywhere, the message fails or decodes a prefix; it never reads past its end.
TEST(PodProtoTest, TruncatedMessagesFailCleanly) {
  const std::string whole = realisticPod().bytes();
  int failures = 0;
  for (std::size_t n = 1; n < whole.size(); ++n) {
    Pod pod;
    const Status s = decodePodProto(std::string_view(whole).substr(0, n), pod);
    if (!s.isOk()) {
      ++failures;
      EXPECT_THAT(s.message(), HasSubstr("malformed protobuf")) << n;
    }
  }
  EXPECT_GT(failures, static_cast<int>(whole.size() / 2));
  Pod pod;
  const Status s = decodePodProto(std::string_view(whole).substr(0, 3), pod);
  // Each message's length is checked against its parent's before it is read, so the cut is found
  // at the top, whatever it cuts.
  EXPECT_EQ(s.message(), "malformed protobuf: a length-delimited field runs past the end of its message");
}

TEST(PodProtoTest, ThroughDecodeObjectProto) {
  Object obj;
  ASSERT_TRUE(decodeObjectProto(Kind::Pod, realisticPod().bytes(), obj).isOk());
  EXPECT_EQ(std::get<Pod>(obj).name, "web-7d9f8b6c5d-x2k4p");
  EXPECT_THAT(decodeObjectProto(Kind::Pod, Proto().msg(1, Proto().str(3, "ns")).bytes(), obj).message(),
              HasSubstr("metadata.name: missing"));
  EXPECT_FALSE(decodeObjectProto(Kind::PersistentVolumeClaim, "", obj).isOk());
  EXPECT_TRUE(decodesProto(Kind::Pod));
  EXPECT_FALSE(decodesProto(Kind::PodDisruptionBudget));
}

}  // namespace
}  // namespace kdesched::api
