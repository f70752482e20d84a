// LowNodeUtilization with amounts beyond int64 milli-units (api::kSaturatedMilli): a saturated
// figure is never the ground for an eviction. A node whose usage is saturated is left out (its
// usage is unknown); a node whose capacity is saturated may take pods, but is no source for it.
#include <gtest/gtest.h>

#include "pkg/plugins/lownodeutilization/lownodeutilization.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

const char* kPlugin = "LowNodeUtilization";
const std::string kArgs =
    "      thresholds: {cpu: 30, memory: 30, pods: 30}\n"
    "      targetThresholds: {cpu: 50, memory: 50, pods: 50}\n";
constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;

std::shared_ptr<const api::Node> node(const std::string& name, std::int64_t cpuMilli, std::int64_t memMilli) {
  api::Node n = *NodeBuilder(name).allocatable(4000, 8 * kGiB, 110).build();
  n.allocatable.set(api::kCpu(), cpuMilli);
  n.allocatable.set(api::kMemory(), memMilli);
  return std::make_shared<const api::Node>(n);
}

std::shared_ptr<const api::Pod> pod(const std::string& name, const std::string& on, std::int64_t cpuMilli,
                                    std::int64_t memMilli) {
  PodBuilder b(name);
  b.node(on).app(name).request("cpu", cpuMilli).request("memory", memMilli);
  return b.build();
}

constexpr std::int64_t kNodeMem = 8 * kGiB * 1000;

struct Case {
  std::string name;
  std::vector<std::shared_ptr<const api::Node>> nodes;
  std::vector<std::shared_ptr<const api::Pod>> pods;
  std::vector<std::string> wantEvicted;
};

class LowNodeUtilizationSaturationTest : public ::testing::TestWithParam<Case> {};

TEST_P(LowNodeUtilizationSaturationTest, EvictsNothingOnASaturatedFigure) {
  const Case& c = GetParam();
  ClusterBuilder b;
  for (auto& n : c.nodes) b.add(n);
  for (auto& p : c.pods) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "balance", kArgs), *b.snapshot());
  EXPECT_EQ(out.evicted, c.wantEvicted) << c.name;
  for (const auto& r : out.cycle.runs) EXPECT_TRUE(r.status.isOk()) << r.plugin << ": " << r.status.message();
}

// n1 is at 40% cpu, between the thresholds: only a pod's saturated memory (10P, beyond int64
// milli) could make it overutilized. n2 and n3 are empty.
std::vector<std::shared_ptr<const api::Pod>> betweenThresholds(bool withHog) {
  std::vector<std::shared_ptr<const api::Pod>> pods;
  for (int i = 1; i <= 4; ++i) pods.push_back(pod("p" + std::to_string(i), "n1", 400, kGiB * 1000));
  if (withHog) pods.push_back(pod("hog", "n1", 0, api::kSaturatedMilli));
  return pods;
}

INSTANTIATE_TEST_SUITE_P(
    Table, LowNodeUtilizationSaturationTest,
    ::testing::Values(
        Case{.name = "control: a real overload is drained",
             .nodes = {node("n1", 4000, kNodeMem), node("n2", 4000, kNodeMem), node("n3", 4000, kNodeMem)},
             .pods = {pod("p1", "n1", 1000, 0), pod("p2", "n1", 1000, 0), pod("p3", "n1", 1000, 0)},
             .wantEvicted = {"default/p1"}},
        Case{.name = "a pod with saturated memory leaves its node out: its usage is unknown",
             .nodes = {node("n1", 4000, kNodeMem), node("n2", 4000, kNodeMem), node("n3", 4000, kNodeMem)},
             .pods = betweenThresholds(true),
             .wantEvicted = {}},
        Case{.name = "two pods whose memory sums past int64 milli leave their node out",
             .nodes = {node("n1", 4000, kNodeMem), node("n2", 4000, kNodeMem), node("n3", 4000, kNodeMem)},
             .pods = {pod("a", "n1", 400, 5'000'000'000'000'000'000), pod("b", "n1", 400, 5'000'000'000'000'000'000),
                      pod("c", "n1", 400, 0), pod("d", "n1", 400, 0)},
             .wantEvicted = {}},
        // 9P of memory fits in int64 milli; against a capacity saturated at ~9.2P it reads 97%,
        // though the node's true capacity (100E, say) is far larger.
        Case{.name = "a saturated capacity makes no node a source",
             .nodes = {node("virtual", 4000, api::kSaturatedMilli), node("n2", 4000, kNodeMem),
                       node("n3", 4000, kNodeMem)},
             .pods = {pod("big", "virtual", 400, 9'000'000'000'000'000'000), pod("s1", "virtual", 400, 0),
                      pod("s2", "virtual", 400, 0), pod("s3", "virtual", 400, 0)},
             .wantEvicted = {}},
        Case{.name = "a saturated capacity still takes pods from a real overload, without overflowing the room",
             .nodes = {node("n1", 4000, kNodeMem), node("virtual", api::kSaturatedMilli, api::kSaturatedMilli),
                       node("virtual2", api::kSaturatedMilli, api::kSaturatedMilli)},
             .pods = {pod("p1", "n1", 1000, 0), pod("p2", "n1", 1000, 0), pod("p3", "n1", 1000, 0)},
             .wantEvicted = {"default/p1"}}),
    [](const auto& info) {
      std::string n;
      for (char ch : info.param.name) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return n;
    });

}  // namespace
}  // namespace kdesched::testing
