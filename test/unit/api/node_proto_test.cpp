// The protobuf node decoder against the JSON one: the same node in both encodings decodes to the
// same object, and invalid values fail with the JSON decoder's words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "pkg/api/decode_proto.h"
#include "test/unit/api/decode_fixtures.h"
#include "test/unit/testing/pod_dump.h"
#include "test/unit/testing/proto_writer.h"

namespace kdesched::api {
namespace {

using kdesched::testing::dumpNode;
using kdesched::testing::Proto;
using ::testing::HasSubstr;

constexpr std::string_view kNodeJson = R"({
  "metadata": {"name": "node-7", "creationTimestamp": "2024-05-02T08:00:00Z", "resourceVersion": "5",
               "labels": {"kubernetes.io/hostname": "node-7", "topology.kubernetes.io/zone": "eu-west-1a"},
               "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
  "spec": {"podCIDR": "10.244.7.0/24", "unschedulable": true,
           "taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"},
                      {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2024-05-02T09:00:00Z"}]},
  "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
             "allocatable": {"cpu": "7800m", "memory": "30Gi", "pods": "110"},
             "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "Unknown"}],
             "images": [{"names": ["nginx:1.25"], "sizeBytes": 70000000}]}
})";

Proto condition(std::string_view type, std::string_view status) {
  return Proto().str(1, type).str(2, status).msg(3, Proto()).msg(4, Proto()).str(5, "").str(6, "");
}

Proto node() {
  Proto meta;
  meta.str(1, "node-7")
      .str(6, "5")
      .time(8, 1714636800)
      .entry(11, "kubernetes.io/hostname", "node-7")
      .entry(11, "topology.kubernetes.io/zone", "eu-west-1a")
      .entry(12, "node.alpha.kubernetes.io/ttl", "0");
  Proto spec;
  spec.str(1, "10.244.7.0/24")
      .varint(4, 1)
      .msg(5, Proto().str(1, "dedicated").str(2, "db").str(3, "NoSchedule"))
      .msg(5, Proto().str(1, "node.kubernetes.io/unreachable").str(2, "").str(3, "NoExecute").time(4, 1714640400));
  Proto status;
  status.quantity(1, "cpu", "8")
      .quantity(1, "memory", "32Gi")
      .quantity(1, "pods", "110")
      .quantity(2, "cpu", "7800m")
      .quantity(2, "memory", "30Gi")
      .quantity(2, "pods", "110")
      .str(3, "")
      .msg(4, condition("MemoryPressure", "False"))
      .msg(4, condition("Ready", "Unknown"))
      .msg(8, Proto().str(1, "nginx:1.25").varint(2, 70000000));
  return Proto().msg(1, meta).msg(2, spec).msg(3, status);
}

Result<Node> nodeFromJson(std::string_view json) {
  Node n;
  Status s = decodeWith(decodeNode, json, n);
  if (!s.isOk()) return s;
  return n;
}

TEST(NodeProtoTest, DecodesAsItsJson) {
  Node fromProto;
  ASSERT_TRUE(decodeNodeProto(node().bytes(), fromProto).isOk());
  auto fromJson = nodeFromJson(kNodeJson);
  ASSERT_TRUE(fromJson.isOk()) << fromJson.error();
  EXPECT_EQ(dumpNode(fromProto), dumpNode(*fromJson));
  EXPECT_EQ(fromProto.taints.size(), 2u);
  EXPECT_TRUE(fromProto.unschedulable);
  EXPECT_EQ(fromProto.readyCondition, false);
  EXPECT_EQ(fromProto.allocatable.get(Symbol("cpu")), 7800);
}

// Without allocatable, capacity counts (as in JSON).
TEST(NodeProtoTest, CapacityWithoutAllocatable) {
  Node n;
  ASSERT_TRUE(
      decodeNodeProto(Proto().msg(1, Proto().str(1, "n")).msg(3, Proto().quantity(1, "cpu", "4")).bytes(), n).isOk());
  EXPECT_EQ(n.allocatable.get(Symbol("cpu")), 4000);
  EXPECT_FALSE(n.readyCondition.has_value());
}

TEST(NodeProtoTest, InvalidValuesFailAsInJson) {
  Node n;
  Status s = decodeNodeProto(Proto().msg(2, Proto().msg(5, Proto().str(1, "k").str(3, "Sometimes"))).bytes(), n);
  EXPECT_EQ(s.message(), "spec.taints[0].effect: unknown taint effect \"Sometimes\"");
  s = decodeNodeProto(Proto().msg(2, Proto().msg(5, Proto().str(1, "k")).msg(5, Proto().str(1, "j"))).bytes(), n);
  EXPECT_EQ(s.message(), "spec.taints[0]: missing effect");
  s = decodeNodeProto(Proto().msg(3, Proto().quantity(2, "memory", "lots")).bytes(), n);
  EXPECT_EQ(s.message(), "status.allocatable.memory: invalid quantity \"lots\"");
  Object obj;
  EXPECT_THAT(decodeObjectProto(Kind::Node, Proto().msg(2, Proto()).bytes(), obj).message(),
              HasSubstr("metadata.name: missing"));
  ASSERT_TRUE(decodeObjectProto(Kind::Node, node().bytes(), obj).isOk());
  EXPECT_EQ(std::get<Node>(obj).name, "node-7");
  EXPECT_TRUE(decodesProto(Kind::Node));
}

}  // namespace
}  // namespace kdesched::api
