// Pod-level resources (spec.resources, PodLevelResources: beta and on by default since 1.34): the
// pod's requests as k8s resourcehelper.PodRequests computes them (a pod-level request for cpu,
// memory or hugepages-* replaces the containers' sum, then the overhead is added), the API
// server's defaulting of pod-level requests from pod-level limits, the QoS class from pod-level
// resources alone (qos.ComputePodQOS), and the protobuf decoder agreeing with the JSON one.
#include <gtest/gtest.h>

#include <string>

#include "pkg/api/decode_proto.h"
#include "test/unit/api/decode_fixtures.h"
#include "test/unit/testing/pod_dump.h"
#include "test/unit/testing/proto_writer.h"

namespace kdesched::api {
namespace {

using kdesched::testing::Proto;

// Two containers of 100m and 128Mi each (and 1Gi of ephemeral storage in the first), 10m overhead,
// no status (so the QoS class is computed), and `podLevel` as spec.resources ("" leaves it out).
std::string podJson(const std::string& podLevel) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{)"
         R"("containers":[{"name":"a","resources":{"requests":{"cpu":"100m","memory":"128Mi","ephemeral-storage":"1Gi"}}},)"
         R"({"name":"b","resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}],"overhead":{"cpu":"10m"})" +
         (podLevel.empty() ? "" : R"(,"resources":)" + podLevel) + "}}";
}

Pod decode(const std::string& podLevel) {
  auto pod = podFromJson(podJson(podLevel));
  EXPECT_TRUE(pod.isOk()) << pod.error();
  return pod.isOk() ? *pod : Pod{};
}

TEST(PodLevelResources, PodLevelRequestsReplaceTheContainersSumBeforeTheOverhead) {
  EXPECT_EQ(decode("").requests, (ResourceList{{"cpu", 210}, {"memory", 256 * kMi}, {"ephemeral-storage", 1 * kGi}}));
  // cpu and memory from the pod level; ephemeral-storage is not a pod-level resource: the
  // containers' figure stays, and a pod-level one is ignored.
  EXPECT_EQ(decode(R"({"requests":{"cpu":"1","memory":"1Gi","ephemeral-storage":"5Gi"}})").requests,
            (ResourceList{{"cpu", 1010}, {"memory", 1 * kGi}, {"ephemeral-storage", 1 * kGi}}));
  // Only the resources it names: memory from the containers.
  EXPECT_EQ(decode(R"({"requests":{"cpu":"2"}})").requests,
            (ResourceList{{"cpu", 2010}, {"memory", 256 * kMi}, {"ephemeral-storage", 1 * kGi}}));
  EXPECT_EQ(
      decode(R"({"requests":{"hugepages-2Mi":"4Mi"}})").requests,
      (ResourceList{{"cpu", 210}, {"memory", 256 * kMi}, {"ephemeral-storage", 1 * kGi}, {"hugepages-2Mi", 4 * kMi}}));
  EXPECT_EQ(decode("null").requests, decode("").requests);
}

TEST(PodLevelResources, RequestsDefaultFromTheContainersThenFromPodLevelLimits) {
  // Limits only: cpu and memory requests default to the containers' sums (they have both); a
  // hugepages limit becomes its request.
  EXPECT_EQ(
      decode(R"({"limits":{"cpu":"2","memory":"2Gi","hugepages-1Gi":"1Gi"}})").requests,
      (ResourceList{{"cpu", 210}, {"memory", 256 * kMi}, {"ephemeral-storage", 1 * kGi}, {"hugepages-1Gi", 1 * kGi}}));
  // Containers without requests: the pod-level limits are the requests.
  auto pod = podFromJson(R"({"metadata":{"name":"q","namespace":"default"},"spec":{"containers":[{"name":"a"}],)"
                         R"("resources":{"limits":{"cpu":"500m","memory":"1Gi"}}}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->requests, (ResourceList{{"cpu", 500}, {"memory", 1 * kGi}}));
  EXPECT_EQ(pod->qos, QosClass::Guaranteed);
}

TEST(PodLevelResources, TheQosClassComesFromPodLevelResourcesAlone) {
  EXPECT_EQ(decode("").qos, QosClass::Burstable);
  EXPECT_EQ(decode(R"({"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}})").qos,
            QosClass::Guaranteed);
  EXPECT_EQ(decode(R"({"requests":{"cpu":"1"},"limits":{"cpu":"1"}})").qos, QosClass::Burstable)
      << "limits must name cpu and memory";
  EXPECT_EQ(decode(R"({"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"2","memory":"1Gi"}})").qos,
            QosClass::Burstable);
  // Present but empty: the containers' requests do not count any more.
  EXPECT_EQ(decode("{}").qos, QosClass::BestEffort);
  EXPECT_EQ(decode("null").qos, QosClass::Burstable);
}

TEST(PodLevelResources, ProtobufDecodesAsJson) {
  const Proto requests = Proto().quantity(2, "cpu", "100m").quantity(2, "memory", "128Mi");
  const Proto spec = Proto()
                         .msg(2, Proto().str(1, "a").msg(8, Proto()
                                                                .quantity(2, "cpu", "100m")
                                                                .quantity(2, "memory", "128Mi")
                                                                .quantity(2, "ephemeral-storage", "1Gi")))
                         .msg(2, Proto().str(1, "b").msg(8, requests))
                         .quantity(32, "cpu", "10m")
                         .msg(40, Proto()
                                      .quantity(1, "cpu", "2")
                                      .quantity(1, "memory", "2Gi")
                                      .quantity(2, "cpu", "1")
                                      .quantity(2, "hugepages-2Mi", "4Mi"));
  const Proto pod = Proto().msg(1, Proto().str(1, "p").str(3, "default")).msg(2, spec);
  Pod fromProto;
  ASSERT_TRUE(decodePodProto(pod.bytes(), fromProto).isOk());
  const Pod fromJson = decode(R"({"limits":{"cpu":"2","memory":"2Gi"},"requests":{"cpu":"1","hugepages-2Mi":"4Mi"}})");
  EXPECT_EQ(kdesched::testing::dumpPod(fromProto), kdesched::testing::dumpPod(fromJson));
  EXPECT_EQ(
      fromProto.requests,
      (ResourceList{{"cpu", 1010}, {"memory", 256 * kMi}, {"ephemeral-storage", 1 * kGi}, {"hugepages-2Mi", 4 * kMi}}));
  EXPECT_EQ(fromProto.qos, QosClass::Burstable);
}

}  // namespace
}  // namespace kdesched::api
