// The node usage pieces both node-utilization plugins share, at their boundaries: upstream's units,
// inclusive classification, caps, and the source-node order with its tie-break.
#include "pkg/plugins/common/node_usage.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

using namespace plugins::nodeusage;

const std::vector<api::Symbol>& tracked() {
  static const std::vector<api::Symbol> t{api::kCpu(), api::kMemory(), api::kPods()};
  return t;
}

NodeUsage usageOn(const api::Node& node, std::int64_t cpu, std::int64_t mem, std::int64_t pods) {
  NodeUsage n;
  n.node = &node;
  n.usage = {cpu, mem, pods * 1000};
  n.percent = percentages(tracked(), node, n.usage);
  return n;
}

TEST(NodeUsage, UpstreamUnitsRoundUpAllButCpu) {
  EXPECT_EQ(upstreamUnits(api::kCpu(), 1500), 1500);
  EXPECT_EQ(upstreamUnits(api::kMemory(), 1500), 2);
  EXPECT_EQ(upstreamUnits(api::kMemory(), 1000), 1);
}

TEST(NodeUsage, ThresholdsAreInclusiveBelowAndStrictAbove) {
  auto node = NodeBuilder("n").allocatable(4000, 8 * kGi, 20).build();
  NodeUsage at = usageOn(*node, 800, 0, 0);  // cpu exactly 20%
  PerResource<std::optional<double>> twenty{20.0, std::nullopt, std::nullopt};
  EXPECT_TRUE(atOrBelow(at, twenty));
  EXPECT_FALSE(above(at, twenty));
  NodeUsage over = usageOn(*node, 801, 0, 0);
  EXPECT_FALSE(atOrBelow(over, twenty));
  EXPECT_TRUE(above(over, twenty));
  // A resource without a threshold never classifies.
  EXPECT_TRUE(atOrBelow(usageOn(*node, 0, 8 * kGi, 20), twenty));
}

TEST(NodeUsage, CapsAtTheThresholdInUpstreamUnits) {
  auto node = NodeBuilder("n").allocatable(4000, 8 * kGi, 20).build();
  EXPECT_EQ(capAt(api::kCpu(), *node, 50.0), 2000);
  EXPECT_EQ(capAt(api::kPods(), *node, 33.0), 6000);  // int64(0.33 × 20) pods
  EXPECT_EQ(capAt(api::kMemory(), *node, std::nullopt), 8 * kGi * 1000);
  EXPECT_EQ(capAt(api::Symbol("example.com/gpu"), *node, 50.0), 0);  // the node has none
}

TEST(NodeUsage, OrdersByRawSumWithTiesInNodeOrder) {
  auto a = NodeBuilder("a").build();
  auto b = NodeBuilder("b").build();
  auto c = NodeBuilder("c").build();
  // Memory bytes dominate upstream's unweighted sum: c's 1Mi outweighs b's 2000m cpu.
  NodeUsage na = usageOn(*a, 100, 0, 1), nb = usageOn(*b, 2000, 0, 1), nc = usageOn(*c, 0, kMi * 1000, 0);
  NodeUsage tie = usageOn(*c, 100, 0, 1);
  auto names = [](const std::vector<NodeUsage*>& v) {
    std::vector<std::string> out;
    for (auto* n : v) out.push_back(n->node->name);
    return out;
  };
  EXPECT_EQ(names(byUsageSum(tracked(), {&nc, &na, &nb}, true)), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(names(byUsageSum(tracked(), {&na, &nb, &nc}, false)), (std::vector<std::string>{"c", "b", "a"}));
  EXPECT_EQ(names(byUsageSum(tracked(), {&na, &tie}, false)), (std::vector<std::string>{"a", "c"}));
}

TEST(NodeUsage, RoomIsCapsMinusUsageSummed) {
  auto a = NodeBuilder("a").allocatable(4000, 8 * kGi, 20).build();
  auto b = NodeBuilder("b").allocatable(2000, 8 * kGi, 10).build();
  NodeUsage na = usageOn(*a, 1000, 0, 5), nb = usageOn(*b, 500, 0, 2);
  setCaps(tracked(), {&na, &nb}, {50.0, std::nullopt, 100.0});
  EXPECT_EQ(roomBelowCaps({&na, &nb}, 3), (PerResource<std::int64_t>{1000 + 500, 16 * kGi * 1000, 23000}));
}

TEST(NodeUsage, DescribesAFewNodes) {
  std::vector<std::shared_ptr<const api::Node>> nodes;
  std::vector<NodeUsage> usage;
  for (const char* name : {"n1", "n2", "n3", "n4", "n5"}) nodes.push_back(NodeBuilder(name).build());
  for (auto& n : nodes) usage.push_back(usageOn(*n, 400, 0, 0));
  std::vector<NodeUsage*> ptrs;
  for (auto& u : usage) ptrs.push_back(&u);
  EXPECT_EQ(describeNodes(tracked(), ptrs),
            "n1 (cpu 10%, memory 0%, pods 0%), n2 (cpu 10%, memory 0%, pods 0%), n3 (cpu 10%, memory 0%, pods 0%) "
            "and 2 more");
}

}  // namespace
}  // namespace kdesched::testing
