// HighNodeUtilization by measured usage (kdesched only: upstream v0.36's HighNodeUtilization has
// no metricsUtilization), through the real engine and plan sink: the coolest node by usage is
// drained even where requests say otherwise; the rules are LowNodeUtilization's (a source that
// gave nothing skips the plugin, never requests instead; a Prometheus score moves one pod per node).
#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;

const char* kPlugin = "HighNodeUtilization";
const std::string kCpu20 = "      thresholds: {cpu: 20}\n";
const std::string kByMetricsServer = "      metricsUtilization:\n        source: KubernetesMetrics\n";
const std::string kMetricsServerProvider = "metricsProviders:\n- source: KubernetesMetrics\n";
const std::string kQuery = "instance:node_cpu:rate:sum";
const std::string kByPrometheus =
    "      metricsUtilization:\n        source: Prometheus\n        prometheus:\n          query: " + kQuery + "\n";
const std::string kPrometheusProvider =
    "metricsProviders:\n- source: Prometheus\n  prometheus:\n    url: http://prometheus.monitoring:9090\n";
constexpr api::Timestamp kNow = 100000;  // runPolicy's clock

PodBuilder pod(const std::string& name, std::int64_t cpu, const std::string& on) {
  PodBuilder b(name);
  b.node(on).requests(cpu, 128 * kMi);
  return b;
}

// By requests node1 is busy (50%) and node2 nearly empty (10%); by usage it is the other way round:
// node1's pods idle (5% in all), node2's pod is busy (60%).
auto requestsSayNode2() {
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build()).add(NodeBuilder("node2").build());
  b.add(pod("a1", 1000, "node1").build()).add(pod("a2", 1000, "node1").build()).add(pod("b1", 400, "node2").build());
  return b.snapshot();
}

usage::ClusterUsage metricsServer(std::int64_t node1Cpu, std::int64_t node2Cpu, bool withPods = true) {
  usage::ClusterUsage u;
  u.asOf = kNow;
  usage::SourceReadings& r = u.kubernetesMetrics.emplace();
  r.origin = "metrics-server";
  r.nodes[api::Symbol("node1")] = {node1Cpu, 256 * kMi, std::nullopt, kNow};
  r.nodes[api::Symbol("node2")] = {node2Cpu, 256 * kMi, std::nullopt, kNow};
  if (withPods) {
    r.pods.add("default", "a1", node1Cpu / 2, 128 * kMi);
    r.pods.add("default", "a2", node1Cpu / 2, 128 * kMi);
    r.pods.add("default", "b1", node2Cpu, 128 * kMi);
  }
  r.podsTakenAt = kNow;
  r.pods.finish();
  return u;
}

TEST(HighNodeUtilizationByUsage, RequestsAloneDrainNode2) {
  auto out = runPolicy(policyWith(kPlugin, "balance", kCpu20), *requestsSayNode2(), kNow);
  EXPECT_EQ(out.evicted, (std::vector<std::string>{"default/b1"}));
}

TEST(HighNodeUtilizationByUsage, MetricsServerDrainsTheCoolestNodeByUsage) {
  usage::ClusterUsage u = metricsServer(200, 2400);
  auto out = runPolicy(policyWith(kPlugin, "balance", kCpu20 + kByMetricsServer, "", kMetricsServerProvider),
                       *requestsSayNode2(), kNow, &u);
  EXPECT_EQ(out.evicted, (std::vector<std::string>{"default/a1", "default/a2"}));
  ASSERT_EQ(out.cycle.runs.size(), 1u);
  EXPECT_TRUE(out.cycle.runs[0].status.isOk()) << out.cycle.runs[0].status.message();
  ASSERT_FALSE(out.reasons.empty());
  EXPECT_NE(out.reasons[0].find("node node1 is underutilized by metrics-server usage (cpu 5% <= 20%"),
            std::string::npos)
      << out.reasons[0];
}

TEST(HighNodeUtilizationByUsage, PodsWithoutPodMetricsStay) {
  usage::ClusterUsage u = metricsServer(200, 2400, /*withPods=*/false);
  auto out = runPolicy(policyWith(kPlugin, "balance", kCpu20 + kByMetricsServer, "", kMetricsServerProvider),
                       *requestsSayNode2(), kNow, &u);
  EXPECT_TRUE(out.evicted.empty());
}

TEST(HighNodeUtilizationByUsage, SourceDownSkipsAndNeverFallsBackToRequests) {
  usage::ClusterUsage u = metricsServer(200, 2400);
  u.kubernetesMetrics->down = "the LIST of NodeMetrics failed: 503";
  auto out = runPolicy(policyWith(kPlugin, "balance", kCpu20 + kByMetricsServer, "", kMetricsServerProvider),
                       *requestsSayNode2(), kNow, &u);
  EXPECT_TRUE(out.evicted.empty());
  ASSERT_EQ(out.cycle.runs.size(), 1u);
  EXPECT_NE(out.cycle.runs[0].status.message().find("metrics-server gave no usage this cycle"), std::string::npos)
      << out.cycle.runs[0].status.message();
}

TEST(HighNodeUtilizationByUsage, NoProviderFailsEachCycle) {
  usage::ClusterUsage u = metricsServer(200, 2400);
  auto out = runPolicy(policyWith(kPlugin, "balance", kCpu20 + kByMetricsServer), *requestsSayNode2(), kNow, &u);
  EXPECT_TRUE(out.evicted.empty());
  ASSERT_EQ(out.cycle.runs.size(), 1u);
  EXPECT_NE(out.cycle.runs[0].status.message().find("error initializing usage client: metrics client not initialized"),
            std::string::npos)
      << out.cycle.runs[0].status.message();
}

TEST(HighNodeUtilizationByUsage, PrometheusMovesOnePodPerNode) {
  usage::ClusterUsage u;
  u.asOf = kNow;
  usage::SourceReadings& r = u.prometheus[kQuery];
  r.source = usage::Source::Prometheus;
  r.origin = "Prometheus";
  r.nodes[api::Symbol("node1")] = {std::nullopt, std::nullopt, 0.05, kNow};
  r.nodes[api::Symbol("node2")] = {std::nullopt, std::nullopt, 0.6, kNow};
  auto out = runPolicy(policyWith(kPlugin, "balance", "      thresholds: {MetricResource: 20}\n" + kByPrometheus, "",
                                  kPrometheusProvider),
                       *requestsSayNode2(), kNow, &u);
  EXPECT_EQ(out.evicted.size(), 1u);
  for (const auto& e : out.evicted) EXPECT_NE(e, "default/b1");
}

TEST(HighNodeUtilizationByUsage, PrometheusNeedsMetricResourceThresholds) {
  auto bad = engineFor(policyWith(kPlugin, "balance", kCpu20 + kByPrometheus, "", kPrometheusProvider));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.error().find("thresholds are expected to specify a single instance of \"MetricResource\" resource, got "
                             "[cpu] instead"),
            std::string::npos)
      << bad.error();
}

}  // namespace
}  // namespace kdesched::testing
