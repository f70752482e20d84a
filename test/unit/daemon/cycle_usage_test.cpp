// A live cycle balancing by usage end to end below HTTP: the collector's averages and one
// PodMetrics LIST go through the runner into LowNodeUtilization, which evicts from the hot node
// (requests alone would move nothing); with metrics-server down it evicts nothing at all.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/daemon/cycle_runner.h"
#include "pkg/kube/cache_health.h"
#include "test/unit/daemon/usage_fakes.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using daemon::CycleRunner;
using daemon::RunReport;
using ::testing::HasSubstr;

const std::string kArgs =
    "      thresholds: {cpu: 30, pods: 30}\n"
    "      targetThresholds: {cpu: 50, pods: 50}\n"
    "      metricsUtilization:\n        source: KubernetesMetrics\n";
const std::string kProvider = "metricsProviders:\n- source: KubernetesMetrics\n";
const std::string kPodMetrics = "/apis/metrics.k8s.io/v1beta1/pods";

struct Fixture {
  cluster::Store store;
  FakeApi api;
  kube::CacheHealth health;
  Cancellation stop;
  evictor::PlanSink plan;
  metrics::Metrics metrics{"test", {}};
  Result<engine::Engine> engine = engineFor(policyWith("LowNodeUtilization", "balance", kArgs, "", kProvider));
  std::unique_ptr<daemon::UsageSources> sources;

  // n1 runs a1..a4, 1000m requested each (100% by requests, which would move two of them) and
  // 3200m used (80%: three 400m pods move by usage); n2, n3 idle; n4 has no NodeMetrics (left out).
  Fixture() {
    EXPECT_TRUE(engine.isOk()) << (engine.isOk() ? "" : engine.error());
    for (const char* n : {"n1", "n2", "n3", "n4"}) store.upsert(NodeBuilder(n).allocatable(4000, 8 * kGi, 20).build());
    for (int i = 1; i <= 4; ++i) store.upsert(PodBuilder("a" + std::to_string(i)).node("n1").requests(1000, 0).build());
    auto made = daemon::makeUsageSources(*engine, *api.client, store, api.clock, &metrics, {});
    EXPECT_TRUE(made.isOk()) << (made.isOk() ? "" : made.error());
    if (made.isOk()) sources = std::move(made.value());
  }
  daemon::CycleRunnerParts parts() {
    return {.store = store,
            .engine = *engine,
            .cache = health,
            .stop = stop,
            .primary = plan,
            .clock = api.clock,
            .metrics = &metrics,
            .usage = sources.get()};
  }
  void answer(const std::string& body, int status = 200) { api.transport->onSend(Scripted::json(body, status)); }
};

TEST(CycleWithUsage, EvictsFromTheNodeHotByUsage) {
  Fixture f;
  ASSERT_NE(f.sources, nullptr);
  f.answer(nodeMetricsList({{"n1", "3200m", "2Gi"}, {"n2", "400m", "1Gi"}, {"n3", "400m", "1Gi"}}));
  ASSERT_TRUE(f.sources->metricsServer()->collect());
  f.answer(podMetricsList(
      {{"a1", "400m", "256Mi"}, {"a2", "400m", "256Mi"}, {"a3", "400m", "256Mi"}, {"a4", "400m", "256Mi"}}));
  CycleRunner runner(f.parts());
  RunReport r = runner.runOnce();
  ASSERT_TRUE(r.ran);
  // 80% → 50% of 4000m: three 400m pods by their PodMetrics usage (by requests: two).
  EXPECT_EQ(r.evicted, 3u);
  ASSERT_EQ(f.plan.evictions().size(), 3u);
  EXPECT_THAT(f.plan.evictions()[0].reason, HasSubstr("node n1 is overutilized by metrics-server usage (cpu 80%"));
  EXPECT_EQ(f.api.sentTo(kPodMetrics), 1u);
  EXPECT_EQ(metricValue(f.metrics, "kdesched_usage_source_up{source=\"KubernetesMetrics\"}"), 1);
  EXPECT_EQ(metricValue(f.metrics, "kdesched_usage_nodes_left_out{source=\"KubernetesMetrics\"}"), 1);  // n4
}

TEST(CycleWithUsage, EvictsNothingWhenMetricsServerIsDown) {
  Fixture f;
  ASSERT_NE(f.sources, nullptr);
  f.answer(apiStatus(503, "ServiceUnavailable"), 503);
  EXPECT_FALSE(f.sources->metricsServer()->collect());
  CycleRunner runner(f.parts());
  RunReport r = runner.runOnce();
  ASSERT_TRUE(r.ran);
  EXPECT_EQ(r.evicted, 0u);  // by requests n1 is at 100%: a fallback would evict two
  EXPECT_TRUE(f.plan.evictions().empty());
  EXPECT_TRUE(f.plan.refusals().empty());
  ASSERT_EQ(r.cycle.runs.size(), 1u);
  EXPECT_THAT(r.cycle.runs[0].status.message(), HasSubstr("metrics-server gave no usage this cycle (no NodeMetrics"));
  EXPECT_THAT(r.cycle.runs[0].status.message(), HasSubstr("nothing is evicted on requests instead"));
  EXPECT_EQ(f.api.sentTo(kPodMetrics), 0u);
  EXPECT_EQ(metricValue(f.metrics, "kdesched_usage_source_up{source=\"KubernetesMetrics\"}"), 0);
}

TEST(CycleWithUsage, ARunWithoutAUsagePluginMeasuresNothing) {
  Fixture f;
  ASSERT_NE(f.sources, nullptr);
  f.answer(nodeMetricsList({{"n1", "3200m", "2Gi"}}));
  ASSERT_TRUE(f.sources->metricsServer()->collect());
  f.answer(podMetricsList({{"a1", "400m", "256Mi"}}));  // there if a run asked, which none must
  CycleRunner runner(f.parts());
  framework::CycleScope scope;
  scope.runBalance = false;
  EXPECT_TRUE(runner.runOnce(scope).ran);
  scope.runBalance = true;
  scope.plugins = {"RemoveDuplicates"};
  EXPECT_TRUE(runner.runOnce(scope).ran);
  EXPECT_EQ(f.api.sentTo(kPodMetrics), 0u);
}

TEST(CycleWithUsage, APrometheusUrlKdeschedCannotUseIsASourceDownNotAFailedStart) {
  FakeApi api;
  cluster::Store store;
  store.upsert(NodeBuilder("n1").allocatable(4000, 8 * kGi, 20).build());
  store.upsert(PodBuilder("a1").node("n1").requests(4000, 0).build());
  metrics::Metrics metrics{"test", {}};
  // Go's url.Parse takes "prom:9090" (scheme "prom"), so upstream loads it and fails each query.
  auto engine =
      engineFor(policyWith("LowNodeUtilization", "balance",
                           "      thresholds: {MetricResource: 30}\n"
                           "      targetThresholds: {MetricResource: 50}\n"
                           "      metricsUtilization:\n        source: Prometheus\n"
                           "        prometheus: {query: instance:node_cpu:rate:sum}\n",
                           "", "metricsProviders:\n- source: Prometheus\n  prometheus: {url: \"prom:9090\"}\n"));
  ASSERT_TRUE(engine.isOk()) << engine.error();
  auto made = daemon::makeUsageSources(*engine, *api.client, store, api.clock, &metrics, {});
  ASSERT_TRUE(made.isOk()) << made.error();
  ASSERT_NE(made.value(), nullptr);
  EXPECT_EQ(metricValue(metrics, "kdesched_usage_source_up{source=\"Prometheus\"}"), 0);
  usage::ClusterUsage u = made.value()->measure(1800000000);
  ASSERT_EQ(u.prometheus.size(), 1u);
  const usage::SourceReadings& r = u.prometheus.begin()->second;
  ASSERT_TRUE(r.down.has_value());
  EXPECT_THAT(*r.down, HasSubstr("the Prometheus provider cannot be used"));
  EXPECT_THAT(*r.down, HasSubstr("must start with http:// or https://"));
  EXPECT_TRUE(api.transport->sent().empty()) << "nothing is asked of a source that cannot be used";
}

TEST(CycleWithUsage, APolicyBalancingByRequestsBuildsNoSource) {
  FakeApi api;
  cluster::Store store;
  auto engine =
      engineFor(policyWith("LowNodeUtilization", "balance",
                           "      thresholds: {cpu: 30}\n      targetThresholds: {cpu: 50}\n", "", kProvider));
  ASSERT_TRUE(engine.isOk()) << engine.error();
  auto made = daemon::makeUsageSources(*engine, *api.client, store, api.clock, nullptr, {});
  ASSERT_TRUE(made.isOk());
  // Unlike upstream, which collects whenever the provider is configured: no plugin reads it.
  EXPECT_EQ(made.value(), nullptr);
}

}  // namespace
}  // namespace kdesched::testing
