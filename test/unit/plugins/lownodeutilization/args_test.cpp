// LowNodeUtilization args: every default and every validation message.
#include "pkg/plugins/lownodeutilization/args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/plugins/lownodeutilization/lownodeutilization.h"
#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

// The args alone; warnings_test-style checks call plugins::lownodeutilization::decodeArgs.
Result<plugins::lownodeutilization::Args> decodeArgs(const policy::RawArgs& raw) {
  policy::Warnings warnings;
  return plugins::lownodeutilization::decodeArgs(raw, warnings);
}
using plugins::lownodeutilization::kName;

TEST(LowNodeUtilizationArgs, Defaults) {
  // thresholds and targetThresholds are required; everything else has a default.
  for (const char* extra : {"",
                            "useDeviationThresholds: null\nnumberOfNodes: null\nevictableNamespaces: null\n"
                            "evictionLimits: null\nmetricsUtilization: null\n"}) {
    auto a = decodeArgs(rawArgs(kName, std::string("thresholds: {cpu: 20}\ntargetThresholds: {cpu: 50}\n") + extra));
    ASSERT_TRUE(a.isOk()) << a.error();
    EXPECT_EQ(a->thresholds, (policy::ResourceThresholds{{"cpu", 20}}));
    EXPECT_EQ(a->targetThresholds, (policy::ResourceThresholds{{"cpu", 50}}));
    EXPECT_FALSE(a->useDeviationThresholds);
    EXPECT_EQ(a->numberOfNodes, 0);
    EXPECT_TRUE(a->excludedNamespaces.empty());
    EXPECT_FALSE(a->evictionLimitNode.has_value());
    EXPECT_FALSE(a->metricsUtilization.has_value());
  }
}

// Upstream's validation has no word against an empty resource name; no node has that resource.
TEST(LowNodeUtilizationArgs, AnEmptyResourceNameLoadsWithAWarning) {
  policy::Warnings warnings;
  auto a = plugins::lownodeutilization::decodeArgs(
      rawArgs(kName, "{thresholds: {\"\": 20, cpu: 20}, targetThresholds: {\"\": 50, cpu: 50}}"), warnings);
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->thresholds.at(""), 20);
  const std::string why =
      ": a resource name is empty; no node has such a resource, so, as with upstream, the plugin "
      "finds no room to move pods to and evicts nothing";
  EXPECT_EQ(warnings, (policy::Warnings{std::string(kArgsPath) + ".thresholds" + why,
                                        std::string(kArgsPath) + ".targetThresholds" + why}));
}

TEST(LowNodeUtilizationArgs, DecodesEveryField) {
  auto a = decodeArgs(
      rawArgs(kName,
              "{thresholds: {cpu: 20, example.com/foo: 10}, targetThresholds: {cpu: 50, example.com/foo: 40}, "
              "useDeviationThresholds: true, numberOfNodes: -1, evictableNamespaces: {exclude: [a, b]}, "
              "evictionLimits: {node: 3}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->thresholds.at("example.com/foo"), 10);
  EXPECT_EQ(a->targetThresholds.at("cpu"), 50);
  EXPECT_TRUE(a->useDeviationThresholds);
  EXPECT_EQ(a->numberOfNodes, -1);
  EXPECT_EQ(a->excludedNamespaces, (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(a->evictionLimitNode.has_value());
  EXPECT_EQ(*a->evictionLimitNode, 3u);
  plugins::lownodeutilization::LowNodeUtilization plugin(std::move(*a));
  std::vector<std::string> tracked;
  for (const auto& r : plugin.trackedResources()) tracked.push_back(r.str());
  EXPECT_EQ(tracked, (std::vector<std::string>{"cpu", "memory", "pods", "example.com/foo"}));
}

TEST(LowNodeUtilizationArgs, DecodesEveryFieldThroughThePolicyLoader) {
  auto e = engineFor(policyWith(kName, "balance",
                                "      thresholds: {cpu: 20, memory: 20, pods: 20}\n"
                                "      targetThresholds: {cpu: 50, memory: 50, pods: 50}\n"
                                "      useDeviationThresholds: false\n"
                                "      numberOfNodes: 2\n"
                                "      evictableNamespaces:\n        exclude: [kube-system]\n"
                                "      evictionLimits:\n        node: 3\n"
                                "      metricsUtilization: null\n"));
  ASSERT_TRUE(e.isOk()) << e.error();
}

TEST(LowNodeUtilizationArgs, DeviationModeAllowsThresholdAboveTarget) {
  auto a =
      decodeArgs(rawArgs(kName, "useDeviationThresholds: true\nthresholds: {cpu: 30}\ntargetThresholds: {cpu: 10}"));
  EXPECT_TRUE(a.isOk()) << a.error();
}

class LowNodeUtilizationArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(LowNodeUtilizationArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, LowNodeUtilizationArgsRejected,
    ::testing::Values(
        RejectedArgs{"no_args", "", ".thresholds: thresholds config is not valid: no resource threshold is configured"},
        RejectedArgs{"empty_thresholds", "thresholds: {}\ntargetThresholds: {cpu: 50}",
                     ".thresholds: thresholds config is not valid: no resource threshold is configured"},
        RejectedArgs{"missing_target", "thresholds: {cpu: 20}",
                     ".targetThresholds: targetThresholds config is not valid: no resource threshold is configured"},
        RejectedArgs{"threshold_above_100", "thresholds: {cpu: 120}\ntargetThresholds: {cpu: 50}",
                     ".thresholds.cpu: thresholds config is not valid: cpu threshold not in [0, 100] range"},
        RejectedArgs{
            "target_below_0", "thresholds: {memory: 10}\ntargetThresholds: {memory: -1}",
            ".targetThresholds.memory: targetThresholds config is not valid: memory threshold not in [0, 100] range"},
        RejectedArgs{"extended_out_of_range",
                     "thresholds: {nvidia.com/gpu: 101}\ntargetThresholds: {nvidia.com/gpu: 50}",
                     ".thresholds[\"nvidia.com/gpu\"]: thresholds config is not valid: nvidia.com/gpu threshold not in "
                     "[0, 100] range"},
        // kdesched names the first resource only one of the maps has; upstream's message stops before it.
        RejectedArgs{"different_resources", "thresholds: {cpu: 20, memory: 20}\ntargetThresholds: {cpu: 50}",
                     ".targetThresholds: thresholds and targetThresholds configured different resources (memory is "
                     "not in targetThresholds)"},
        // Used to abort (std::out_of_range from map::at): "" read as "no resource missing".
        // An empty resource name loads (with a warning), but only in both maps.
        RejectedArgs{"empty_resource_name", "thresholds: {\"\": 0, cpu: 20}\ntargetThresholds: {cpu: 50}",
                     ".targetThresholds: thresholds and targetThresholds configured different resources (\"\" is not "
                     "in targetThresholds)"},
        RejectedArgs{"empty_resource_name_in_target", "thresholds: {cpu: 20}\ntargetThresholds: {\"\": 0, cpu: 50}",
                     ".thresholds: thresholds and targetThresholds configured different resources (\"\" is not in "
                     "thresholds)"},
        RejectedArgs{"different_resources_other_way", "thresholds: {cpu: 20}\ntargetThresholds: {cpu: 50, pods: 50}",
                     ".thresholds: thresholds and targetThresholds configured different resources (pods is not in "
                     "thresholds)"},
        RejectedArgs{"threshold_above_target", "thresholds: {cpu: 60, pods: 20}\ntargetThresholds: {cpu: 50, pods: 50}",
                     ".thresholds.cpu: thresholds' cpu percentage is greater than targetThresholds'"},
        RejectedArgs{"include_namespaces",
                     "thresholds: {cpu: 20}\ntargetThresholds: {cpu: 50}\nevictableNamespaces: {include: [default]}",
                     ".evictableNamespaces.include: only Exclude namespaces can be set, inclusion is not supported"},
        RejectedArgs{"include_checked_before_thresholds", "evictableNamespaces: {include: [a], exclude: [b]}",
                     ".evictableNamespaces.include: only Exclude namespaces can be set, inclusion is not supported"},
        // Upstream's metricsUtilization checks (validation.go), after the thresholds'.
        RejectedArgs{"metrics_source_and_metrics_server",
                     "thresholds: {cpu: 20}\ntargetThresholds: {cpu: 50}\n"
                     "metricsUtilization: {source: KubernetesMetrics, metricsServer: true}",
                     ".metricsUtilization.source: it is not allowed to set both \"KubernetesMetrics\" source and "
                     "metricsServer"},
        RejectedArgs{"metrics_prometheus_with_kubernetes_metrics",
                     "thresholds: {cpu: 20}\ntargetThresholds: {cpu: 50}\n"
                     "metricsUtilization: {source: KubernetesMetrics, prometheus: {query: up}}",
                     ".metricsUtilization.prometheus: prometheus configuration is not allowed to set when source is "
                     "set to \"KubernetesMetrics\""},
        RejectedArgs{"metrics_prometheus_without_query",
                     "thresholds: {MetricResource: 20}\ntargetThresholds: {MetricResource: 50}\n"
                     "metricsUtilization: {source: Prometheus}",
                     ".metricsUtilization.prometheus: prometheus query is required when metrics source is set to "
                     "\"Prometheus\""},
        RejectedArgs{"metrics_prometheus_empty_query",
                     "thresholds: {MetricResource: 20}\ntargetThresholds: {MetricResource: 50}\n"
                     "metricsUtilization: {source: Prometheus, prometheus: {query: \"\"}}",
                     ".metricsUtilization.prometheus.query: prometheus query is required when metrics source is set "
                     "to \"Prometheus\""},
        RejectedArgs{"metrics_utilization_typo",
                     "thresholds: {cpu: 20}\ntargetThresholds: {cpu: 50}\nmetricsUtilization: {sources: Prometheus}",
                     ".metricsUtilization.sources: unknown field \"sources\" (did you mean \"source\"?)"},
        RejectedArgs{"typo", "thresholds: {cpu: 20}\ntargetThreshold: {cpu: 50}",
                     ".targetThreshold: unknown field \"targetThreshold\" (did you mean \"targetThresholds\"?)"},
        RejectedArgs{"threshold_not_a_number", "thresholds: {cpu: high}\ntargetThresholds: {cpu: 50}",
                     ".thresholds.cpu: must be a number, got \"high\""},
        RejectedArgs{"negative_node_limit",
                     "thresholds: {cpu: 20}\ntargetThresholds: {cpu: 50}\nevictionLimits: {node: -1}",
                     ".evictionLimits.node: must be a non-negative integer, got -1"},
        RejectedArgs{"eviction_limits_typo",
                     "thresholds: {cpu: 20}\ntargetThresholds: {cpu: 50}\nevictionLimits: {nodes: 1}",
                     ".evictionLimits.nodes: unknown field \"nodes\" (did you mean \"node\"?)"}),
    rejectedArgsName);

TEST(LowNodeUtilizationArgs, RejectedThroughThePolicyLoader) {
  auto e = engineFor(policyWith(kName, "balance", "      thresholds: {cpu: 120}\n      targetThresholds: {cpu: 50}\n"));
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(e.error().find("profiles[0].pluginConfig[1].args.thresholds.cpu: thresholds config is not valid: cpu "
                           "threshold not in [0, 100] range"),
            std::string::npos)
      << e.error();
}

TEST(LowNodeUtilizationArgs, DecodesMetricsUtilization) {
  auto a =
      decodeArgs(rawArgs(kName,
                         "thresholds: {MetricResource: 20}\ntargetThresholds: {MetricResource: 50}\n"
                         "metricsUtilization: {source: Prometheus, prometheus: {query: instance:node_cpu:rate:sum}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  ASSERT_TRUE(a->metricsUtilization.has_value());
  EXPECT_EQ(a->metricsUtilization->source, "Prometheus");
  EXPECT_EQ(a->metricsUtilization->prometheusQuery, "instance:node_cpu:rate:sum");
  EXPECT_FALSE(a->metricsUtilization->metricsServer);
  plugins::lownodeutilization::LowNodeUtilization plugin(std::move(*a));
  ASSERT_EQ(plugin.trackedResources().size(), 1u);
  EXPECT_EQ(plugin.trackedResources()[0].str(), "MetricResource");
}

// Upstream builds the plugin only when a Prometheus source's thresholds are exactly MetricResource.
TEST(LowNodeUtilizationArgs, PrometheusThresholdsMustBeMetricResource) {
  const std::string provider = "metricsProviders:\n- source: Prometheus\n  prometheus: {url: \"http://p:9090\"}\n";
  const std::string metrics = "      metricsUtilization: {source: Prometheus, prometheus: {query: q}}\n";
  auto cpu = engineFor(policyWith(
      kName, "balance", "      thresholds: {cpu: 20}\n      targetThresholds: {cpu: 50}\n" + metrics, "", provider));
  ASSERT_FALSE(cpu.isOk());
  EXPECT_NE(cpu.error().find("profiles[0].pluginConfig[1].args.thresholds: thresholds are expected to specify a single "
                             "instance of \"MetricResource\" resource, got [cpu] instead"),
            std::string::npos)
      << cpu.error();
  auto two = engineFor(policyWith(kName, "balance",
                                  "      thresholds: {MetricResource: 20, memory: 10}\n"
                                  "      targetThresholds: {MetricResource: 50, memory: 20}\n" +
                                      metrics,
                                  "", provider));
  ASSERT_FALSE(two.isOk());
  EXPECT_NE(two.error().find("got [MetricResource memory] instead"), std::string::npos) << two.error();
  auto ok = engineFor(
      policyWith(kName, "balance",
                 "      thresholds: {MetricResource: 20}\n      targetThresholds: {MetricResource: 50}\n" + metrics, "",
                 provider));
  ASSERT_TRUE(ok.isOk()) << ok.error();
  EXPECT_THAT(ok->policy.warnings, ::testing::IsEmpty());
  EXPECT_EQ(ok->usageNeeds().prometheusQueries(), std::vector<std::string>{"q"});
}

// What upstream loads and then fails on every cycle ("error initializing usage client: ..."):
// kdesched loads it too, says so once, and fails the same way.
TEST(LowNodeUtilizationArgs, SourcesUpstreamCannotUseLoadWithAWarning) {
  struct Case {
    std::string metrics, topLevel, warning;
  };
  for (const Case& c : std::vector<Case>{
           {"{}", "", "metricsUtilization: metrics source is empty (set source: KubernetesMetrics or Prometheus)"},
           {"{metricsServer: false}", "", "metricsUtilization: metrics source is empty"},
           {"{source: Datadog}", "metricsCollector: {enabled: true}\n",
            "metricsUtilization: unrecognized metrics source"},
           {"{source: KubernetesMetrics}", "", "metricsUtilization: metrics client not initialized"},
           {"{metricsServer: true}", "metricsProviders:\n- source: Prometheus\n  prometheus: {url: http://p}\n",
            "metricsUtilization: metrics client not initialized"},
       }) {
    auto e = engineFor(policyWith(kName, "balance",
                                  "      thresholds: {cpu: 20}\n      targetThresholds: {cpu: 50}\n"
                                  "      metricsUtilization: " +
                                      c.metrics + "\n",
                                  "", c.topLevel));
    ASSERT_TRUE(e.isOk()) << c.metrics << ": " << e.error();
    ASSERT_EQ(e->policy.warnings.size(), 1u) << c.metrics;
    EXPECT_NE(e->policy.warnings[0].find(c.warning), std::string::npos) << e->policy.warnings[0];
    EXPECT_NE(e->policy.warnings[0].find("fails every cycle"), std::string::npos) << e->policy.warnings[0];
    EXPECT_TRUE(e->usageNeeds().empty());
  }
}

TEST(LowNodeUtilizationArgs, ExtendedResourceWithMetricsServerWarns) {
  auto e = engineFor(policyWith(kName, "balance",
                                "      thresholds: {cpu: 20, nvidia.com/gpu: 20}\n"
                                "      targetThresholds: {cpu: 50, nvidia.com/gpu: 50}\n"
                                "      metricsUtilization: {source: KubernetesMetrics}\n",
                                "", "metricsProviders:\n- source: KubernetesMetrics\n"));
  ASSERT_TRUE(e.isOk()) << e.error();
  ASSERT_EQ(e->policy.warnings.size(), 1u);
  EXPECT_NE(e->policy.warnings[0].find("thresholds[\"nvidia.com/gpu\"]: metrics-server reports cpu and memory only"),
            std::string::npos)
      << e->policy.warnings[0];
}

}  // namespace
}  // namespace kdesched::testing
