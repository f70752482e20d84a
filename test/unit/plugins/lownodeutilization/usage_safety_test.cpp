// LowNodeUtilization by measured usage where kdesched is safer than upstream: a node whose sample
// is missing, not a number or stale is left out (upstream fails the whole plugin); a source that
// gave nothing skips the plugin with one error; requests are never used instead. And the reason
// names the usage that decided.
#include <gtest/gtest.h>

#include <cmath>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;

const char* kPlugin = "LowNodeUtilization";
const std::string kArgs =
    "      thresholds: {cpu: 30, pods: 30}\n"
    "      targetThresholds: {cpu: 50, pods: 50}\n"
    "      metricsUtilization:\n        source: KubernetesMetrics\n";
const std::string kProvider = "metricsProviders:\n- source: KubernetesMetrics\n";
constexpr api::Timestamp kNow = 100000;

// n1 busy by usage (3200m of 4000m) though its pods request little; n2 and n3 idle. Pods a1..a4
// on n1 use 400m each; requests are 100m each, so by requests n1 is at 10%.
std::shared_ptr<const cluster::Snapshot> cluster() {
  ClusterBuilder b;
  for (const char* n : {"n1", "n2", "n3"}) b.add(NodeBuilder(n).allocatable(4000, 8 * kGi, 20).build());
  for (int i = 1; i <= 4; ++i) b.add(PodBuilder("a" + std::to_string(i)).node("n1").requests(100, 0).build());
  return b.snapshot();
}

usage::ClusterUsage metrics(std::int64_t n2Cpu = 400) {
  usage::ClusterUsage u;
  u.asOf = kNow;
  usage::SourceReadings& r = u.kubernetesMetrics.emplace();
  r.origin = "metrics-server";
  r.nodes[api::Symbol("n1")] = {3200, 2 * kGi, std::nullopt, kNow - 30};
  r.nodes[api::Symbol("n2")] = {n2Cpu, 1 * kGi, std::nullopt, kNow - 30};
  r.nodes[api::Symbol("n3")] = {400, 1 * kGi, std::nullopt, kNow - 30};
  for (int i = 1; i <= 4; ++i) r.pods.add("default", "a" + std::to_string(i), 400, 256 * kMi);
  r.pods.finish();
  r.podsTakenAt = kNow - 30;
  return u;
}

PlanOutcome run(const usage::ClusterUsage* u, const std::string& topLevel = kProvider) {
  return runPolicy(policyWith(kPlugin, "balance", kArgs, "", topLevel), *cluster(), kNow, u);
}

Status pluginStatus(const PlanOutcome& out) {
  return out.cycle.runs.empty() ? Status::error("no run") : out.cycle.runs[0].status;
}

TEST(LowNodeUtilizationByUsage, BalancesWhatRequestsHide) {
  // By requests nothing is above 50%: nothing moves.
  auto byRequests = runPolicy(policyWith(kPlugin, "balance",
                                         "      thresholds: {cpu: 30, pods: 30}\n"
                                         "      targetThresholds: {cpu: 50, pods: 50}\n"),
                              *cluster(), kNow);
  EXPECT_TRUE(byRequests.evicted.empty());
  usage::ClusterUsage u = metrics();
  auto out = run(&u);
  // 80% → 50% needs 1200m off n1: three 400m pods.
  EXPECT_EQ(out.evicted, (std::vector<std::string>{"default/a1", "default/a2", "default/a3"}));
  EXPECT_TRUE(pluginStatus(out).isOk()) << pluginStatus(out).message();
}

TEST(LowNodeUtilizationByUsage, ReasonNamesTheSourceAndTheUsage) {
  usage::ClusterUsage u = metrics();
  auto out = run(&u);
  ASSERT_FALSE(out.reasons.empty());
  EXPECT_EQ(out.reasons[0],
            "node n1 is overutilized by metrics-server usage (cpu 80% > 50%, memory 25%, pods 20%); "
            "underutilized nodes: n2 (cpu 10%, memory 12.5%, pods 0%), n3 (cpu 10%, memory 12.5%, pods 0%)");
  // After the first pod, its PodMetrics usage (400m), not its request (100m), leaves the node.
  EXPECT_NE(out.reasons[1].find("cpu 70% > 50%"), std::string::npos) << out.reasons[1];
}

TEST(LowNodeUtilizationByUsage, NodeWithoutSampleIsLeftOut) {
  usage::ClusterUsage u = metrics();
  u.kubernetesMetrics->nodes.erase(api::Symbol("n2"));
  auto out = run(&u);
  ASSERT_FALSE(out.reasons.empty());
  // n3 alone takes pods now: its room is 1600m, so four 400m pods... but pods stop at n1 ≤ 50%.
  EXPECT_EQ(out.evicted.size(), 3u);
  EXPECT_NE(out.reasons[0].find("underutilized node: n3 ("), std::string::npos) << out.reasons[0];
  EXPECT_EQ(out.reasons[0].find("n2"), std::string::npos) << out.reasons[0];
}

TEST(LowNodeUtilizationByUsage, StaleSampleIsLeftOut) {
  usage::ClusterUsage u = metrics();
  u.kubernetesMetrics->nodes[api::Symbol("n1")].takenAt = kNow - u.maxSampleAgeSeconds - 1;
  auto out = run(&u);
  // The hot node's sample is too old to act on: nothing moves, and the plugin did not fail.
  EXPECT_TRUE(out.evicted.empty());
  EXPECT_TRUE(pluginStatus(out).isOk());
  u.kubernetesMetrics->nodes[api::Symbol("n1")].takenAt = kNow - u.maxSampleAgeSeconds;
  EXPECT_EQ(run(&u).evicted.size(), 3u);
}

TEST(LowNodeUtilizationByUsage, SampleWithoutCpuIsLeftOut) {
  usage::ClusterUsage u = metrics();
  u.kubernetesMetrics->nodes[api::Symbol("n1")].cpuMilli.reset();
  EXPECT_TRUE(run(&u).evicted.empty());
}

TEST(LowNodeUtilizationByUsage, NoUsableSampleAtAllSkipsWithOneError) {
  usage::ClusterUsage u = metrics();
  for (auto& [name, s] : u.kubernetesMetrics->nodes) s.takenAt = 0;
  auto out = run(&u);
  EXPECT_TRUE(out.evicted.empty());
  EXPECT_EQ(pluginStatus(out).message(),
            "no usable sample from metrics-server for any of the 3 nodes; skipped this cycle, nothing is evicted on "
            "requests instead");
}

TEST(LowNodeUtilizationByUsage, SourceDownSkipsAndNeverFallsBackToRequests) {
  // Requests alone would move pods here: a1..a4 request 1000m each on a 4000m node.
  ClusterBuilder b;
  for (const char* n : {"n1", "n2", "n3"}) b.add(NodeBuilder(n).allocatable(4000, 8 * kGi, 20).build());
  for (int i = 1; i <= 4; ++i) b.add(PodBuilder("a" + std::to_string(i)).node("n1").requests(1000, 0).build());
  usage::ClusterUsage u = metrics();
  u.kubernetesMetrics->down = "metrics.k8s.io: 503 Service Unavailable";
  auto out = runPolicy(policyWith(kPlugin, "balance", kArgs, "", kProvider), *b.snapshot(), kNow, &u);
  EXPECT_TRUE(out.evicted.empty());
  EXPECT_EQ(pluginStatus(out).message(),
            "metrics-server gave no usage this cycle (metrics.k8s.io: 503 Service Unavailable); skipped this cycle, "
            "nothing is evicted on requests instead");
  auto none = runPolicy(policyWith(kPlugin, "balance", kArgs, "", kProvider), *b.snapshot(), kNow, nullptr);
  EXPECT_TRUE(none.evicted.empty());
  EXPECT_EQ(pluginStatus(none).message(),
            "no usage from metrics-server for this cycle; skipped this cycle, nothing is evicted on requests instead");
}

TEST(LowNodeUtilizationByUsage, NoSourceNeverMeansRequests) {
  ClusterBuilder b;
  for (const char* n : {"n1", "n2", "n3"}) b.add(NodeBuilder(n).allocatable(4000, 8 * kGi, 20).build());
  for (int i = 1; i <= 4; ++i) b.add(PodBuilder("a" + std::to_string(i)).node("n1").requests(1000, 0).build());
  usage::ClusterUsage u = metrics();
  for (const char* metrics : {"{}", "{metricsServer: false}", "{source: Datadog}"}) {
    auto out = runPolicy(policyWith(kPlugin, "balance",
                                    "      thresholds: {cpu: 30, pods: 30}\n"
                                    "      targetThresholds: {cpu: 50, pods: 50}\n"
                                    "      metricsUtilization: " +
                                        std::string(metrics) + "\n",
                                    "", kProvider),
                         *b.snapshot(), kNow, &u);
    EXPECT_TRUE(out.evicted.empty()) << metrics;
    EXPECT_NE(pluginStatus(out).message().find("error initializing usage client: "), std::string::npos) << metrics;
  }
}

TEST(LowNodeUtilizationByUsage, PodWithoutMetricsIsNotMoved) {
  usage::ClusterUsage u = metrics();
  usage::PodUsageTable pods;
  for (int i = 2; i <= 4; ++i) pods.add("default", "a" + std::to_string(i), 400, 256 * kMi);
  pods.finish();
  u.kubernetesMetrics->pods = pods;
  auto out = run(&u);
  EXPECT_EQ(out.evicted, (std::vector<std::string>{"default/a2", "default/a3", "default/a4"}));
}

TEST(LowNodeUtilizationByUsage, ProviderNotConfiguredFailsEveryCycleAsUpstream) {
  usage::ClusterUsage u = metrics();
  auto engine = engineFor(policyWith(kPlugin, "balance", kArgs));
  ASSERT_TRUE(engine.isOk()) << engine.error();
  ASSERT_EQ(engine->policy.warnings.size(), 1u);
  EXPECT_NE(engine->policy.warnings[0].find(
                "profiles[0].pluginConfig[1].args.metricsUtilization: metrics client not initialized (add "
                "`metricsProviders: [{source: KubernetesMetrics}]` at the top level of the policy)"),
            std::string::npos)
      << engine->policy.warnings[0];
  EXPECT_TRUE(engine->usageNeeds().empty());
  auto out = run(&u, "");
  EXPECT_TRUE(out.evicted.empty());
  EXPECT_EQ(pluginStatus(out).message(), "error initializing usage client: metrics client not initialized");
}

TEST(LowNodeUtilizationByUsage, DeprecatedCollectorAndMetricsServerFlagWork) {
  usage::ClusterUsage u = metrics();
  const std::string args =
      "      thresholds: {cpu: 30, pods: 30}\n"
      "      targetThresholds: {cpu: 50, pods: 50}\n"
      "      metricsUtilization:\n        metricsServer: true\n";
  auto out =
      runPolicy(policyWith(kPlugin, "balance", args, "", "metricsCollector:\n  enabled: true\n"), *cluster(), kNow, &u);
  EXPECT_EQ(out.evicted.size(), 3u);
}

TEST(LowNodeUtilizationByUsage, NeedsNameTheSourceAndQuery) {
  auto engine = engineFor(policyWith(kPlugin, "balance", kArgs, "", kProvider));
  ASSERT_TRUE(engine.isOk()) << engine.error();
  usage::Needs needs = engine->usageNeeds();
  ASSERT_EQ(needs.consumers.size(), 1u);
  EXPECT_EQ(needs.consumers[0].profile, "test");
  EXPECT_EQ(needs.consumers[0].plugin, kPlugin);
  EXPECT_TRUE(needs.kubernetesMetrics());
  EXPECT_TRUE(needs.prometheusQueries().empty());
}

TEST(LowNodeUtilizationByUsage, PrometheusNaNNodeIsLeftOut) {
  ClusterBuilder b;
  for (const char* n : {"n1", "n2", "n3"}) b.add(NodeBuilder(n).allocatable(4000, 8 * kGi, 20).build());
  for (int i = 1; i <= 4; ++i) b.add(PodBuilder("a" + std::to_string(i)).node("n1").requests(100, 0).build());
  const std::string q = "instance:node_cpu:rate:sum";
  auto runWith = [&](double n3) {
    usage::ClusterUsage u;
    u.asOf = kNow;
    usage::SourceReadings& r = u.prometheus[q];
    r.source = usage::Source::Prometheus;
    r.nodes[api::Symbol("n1")] = {std::nullopt, std::nullopt, 0.9, kNow};
    r.nodes[api::Symbol("n2")] = {std::nullopt, std::nullopt, std::nan(""), kNow};
    r.nodes[api::Symbol("n3")] = {std::nullopt, std::nullopt, n3, kNow};
    return runPolicy(policyWith(kPlugin, "balance",
                                "      thresholds: {MetricResource: 30}\n      targetThresholds: {MetricResource: 50}\n"
                                "      metricsUtilization: {source: Prometheus, prometheus: {query: \"" +
                                    q + "\"}}\n",
                                "",
                                "metricsProviders:\n- source: Prometheus\n  prometheus: {url: "
                                "\"http://prom:9090\"}\n"),
                     *b.snapshot(), kNow, &u);
  };
  auto out = runWith(0.1);
  ASSERT_EQ(out.evicted.size(), 1u);
  EXPECT_EQ(out.reasons[0],
            "node n1 is overutilized by Prometheus query instance:node_cpu:rate:sum usage (MetricResource 90% > 50%); "
            "underutilized node: n3 (MetricResource 10%)");
  // n3 NaN too: no underutilized node is left, nothing moves.
  EXPECT_TRUE(runWith(std::nan("")).evicted.empty());
}

}  // namespace
}  // namespace kdesched::testing
