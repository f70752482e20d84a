// HighNodeUtilization args: every default and every validation message.
#include "pkg/plugins/highnodeutilization/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

// The args alone; warnings_test-style checks call plugins::highnodeutilization::decodeArgs.
Result<plugins::highnodeutilization::Args> decodeArgs(const policy::RawArgs& raw) {
  policy::Warnings warnings;
  return plugins::highnodeutilization::decodeArgs(raw, warnings);
}
using plugins::highnodeutilization::kName;

TEST(HighNodeUtilizationArgs, Defaults) {
  auto a = decodeArgs(rawArgs(kName, "thresholds: {cpu: 20}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->thresholds, (policy::ResourceThresholds{{"cpu", 20}}));
  EXPECT_EQ(a->numberOfNodes, 0);
  EXPECT_FALSE(a->onlyThresholdingResources);
  EXPECT_TRUE(a->excludedNamespaces.empty());
}

TEST(HighNodeUtilizationArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName,
                              "thresholds: {cpu: 20, memory: 0, pods: 100}\n"
                              "numberOfNodes: -1\n"
                              "evictionModes: [OnlyThresholdingResources]\n"
                              "evictableNamespaces: {exclude: [kube-system]}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->thresholds, (policy::ResourceThresholds{{"cpu", 20}, {"memory", 0}, {"pods", 100}}));
  EXPECT_EQ(a->numberOfNodes, -1);
  EXPECT_TRUE(a->onlyThresholdingResources);
  EXPECT_EQ(a->excludedNamespaces, std::vector<std::string>{"kube-system"});
}

TEST(HighNodeUtilizationArgs, ReadsMetricsUtilization) {
  auto a =
      decodeArgs(rawArgs(kName,
                         "thresholds: {MetricResource: 20}\n"
                         "metricsUtilization: {source: Prometheus, prometheus: {query: instance:node_cpu:rate:sum}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  ASSERT_TRUE(a->metricsUtilization.has_value());
  EXPECT_EQ(a->metricsUtilization->source, "Prometheus");
  EXPECT_EQ(a->metricsUtilization->prometheusQuery, "instance:node_cpu:rate:sum");
}

TEST(HighNodeUtilizationArgs, EmptyEvictionModesIsTheDefault) {
  auto a = decodeArgs(rawArgs(kName, "thresholds: {cpu: 20}\nevictionModes: []\nmetricsUtilization: null"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_FALSE(a->onlyThresholdingResources);
  EXPECT_FALSE(a->metricsUtilization.has_value());
}

class HighNodeUtilizationArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(HighNodeUtilizationArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, HighNodeUtilizationArgsRejected,
    ::testing::Values(
        RejectedArgs{"no_args", "", ".thresholds: no resource threshold is configured"},
        RejectedArgs{"empty_thresholds", "thresholds: {}", ".thresholds: no resource threshold is configured"},
        RejectedArgs{"above_100", "thresholds: {cpu: 101}", ".thresholds.cpu: cpu threshold not in [0, 100] range"},
        RejectedArgs{"below_0", "thresholds: {memory: -1}",
                     ".thresholds.memory: memory threshold not in [0, 100] range"},
        RejectedArgs{"invalid_mode", "thresholds: {cpu: 20}\nevictionModes: [OnlyThresholdingResources, Greedy]",
                     ".evictionModes[1]: invalid eviction mode Greedy"},
        RejectedArgs{"include_namespaces", "thresholds: {cpu: 20}\nevictableNamespaces: {include: [a]}",
                     ".evictableNamespaces.include: only Exclude namespaces can be set, inclusion is not supported"},
        // Upstream's order: the namespaces are checked before the thresholds.
        RejectedArgs{"include_before_thresholds", "evictableNamespaces: {include: [a]}",
                     ".evictableNamespaces.include: only Exclude namespaces can be set, inclusion is not supported"},
        RejectedArgs{"thresholds_before_modes", "thresholds: {cpu: 200}\nevictionModes: [Greedy]",
                     ".thresholds.cpu: cpu threshold not in [0, 100] range"},
        // metricsUtilization (kdesched only) is validated as LowNodeUtilization's, with upstream's messages.
        RejectedArgs{"metrics_both",
                     "thresholds: {cpu: 20}\nmetricsUtilization: {source: KubernetesMetrics, metricsServer: true}",
                     ".metricsUtilization.source: it is not allowed to set both \"KubernetesMetrics\" source and "
                     "metricsServer"},
        RejectedArgs{"metrics_no_query",
                     "thresholds: {MetricResource: 20}\nmetricsUtilization: {source: Prometheus, prometheus: {}}",
                     ".metricsUtilization.prometheus.query: prometheus query is required when metrics source is set to "
                     "\"Prometheus\""},
        RejectedArgs{"target_thresholds", "thresholds: {cpu: 20}\ntargetThresholds: {cpu: 50}",
                     ".targetThresholds: unknown field \"targetThresholds\" (known fields: thresholds, numberOfNodes, "
                     "evictionModes, evictableNamespaces, metricsUtilization)"}),
    rejectedArgsName);

TEST(HighNodeUtilizationArgs, ThroughThePolicyLoader) {
  auto bad = engineFor(policyWith(kName, "balance", "      thresholds: {cpu: 20}\n      evictionModes: [Greedy]\n"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.error().find("profiles[0].pluginConfig[1].args.evictionModes[0]: invalid eviction mode Greedy"),
            std::string::npos)
      << bad.error();
}

}  // namespace
}  // namespace kdesched::testing
