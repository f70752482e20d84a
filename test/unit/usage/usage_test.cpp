// The usage model: per-pod usage in 16 bytes, keyed by namespace/name; the moving average; what
// the plugins need.
#include "pkg/usage/usage.h"

#include <gtest/gtest.h>

namespace kdesched::usage {
namespace {

// A missing pod reads as -1, so a lookup that fails is a failed comparison, not a crash.
PodUsageTable::Usage found(const PodUsageTable& t, std::string_view ns, std::string_view name) {
  return t.find(ns, name).value_or(PodUsageTable::Usage{-1, -1});
}

TEST(PodUsageTable, SixteenBytesPerPod) {
  EXPECT_EQ(sizeof(PodSample), 16u);
  PodUsageTable t;
  for (int i = 0; i < 1000; ++i) t.add("ns", "pod-" + std::to_string(i), i, i * 1024);
  t.finish();
  EXPECT_EQ(t.size(), 1000u);
  auto u = t.find("ns", "pod-777");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->cpuMilli, 777);
  EXPECT_EQ(u->memoryBytes, 777 * 1024);
  EXPECT_FALSE(t.find("ns", "pod-1000").has_value());
  EXPECT_FALSE(t.find("other", "pod-1").has_value());
}

TEST(PodUsageTable, NamespaceAndNameAreOneKeyWithoutAmbiguity) {
  PodUsageTable t;
  t.add("a", "b/c", 1, 0);
  t.add("a/b", "c", 2, 0);
  t.finish();
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(found(t, "a", "b/c").cpuMilli, 1);
  EXPECT_EQ(found(t, "a/b", "c").cpuMilli, 2);
}

TEST(PodUsageTable, MemoryRoundsUpToKiAndValuesSaturate) {
  PodUsageTable t;
  t.add("ns", "small", 5, 1);
  t.add("ns", "huge", std::int64_t{1} << 40, std::int64_t{1} << 60);
  t.add("ns", "negative", -5, -1);
  t.finish();
  EXPECT_EQ(found(t, "ns", "small").memoryBytes, 1024);
  EXPECT_EQ(found(t, "ns", "huge").cpuMilli, 4294967295);
  EXPECT_EQ(found(t, "ns", "huge").memoryBytes, std::int64_t{4294967295} * 1024);
  EXPECT_EQ(found(t, "ns", "negative").cpuMilli, 0);
}

TEST(PodUsageTable, ATwiceSeenKeyIsDroppedNotGuessed) {
  PodUsageTable t;
  t.add("ns", "web", 100, 0);
  t.add("ns", "web", 900, 0);
  t.add("ns", "db", 1, 0);
  t.finish();
  EXPECT_FALSE(t.find("ns", "web").has_value());
  EXPECT_EQ(t.dropped(), 2u);
  EXPECT_TRUE(t.find("ns", "db").has_value());
}

TEST(WeightedAverage, IsUpstreamsSmoothing) {
  EXPECT_EQ(weightedAverage(1000, 2000), 1100);
  EXPECT_EQ(weightedAverage(0, 5), 1);  // 0.5 rounds away from zero, as Go's math.Round
  EXPECT_EQ(weightedAverage(10, 10), 10);
}

TEST(ClusterUsage, NewestSampleAndQueries) {
  ClusterUsage u;
  EXPECT_FALSE(u.newestSample().has_value());
  u.kubernetesMetrics.emplace().nodes[api::Symbol("n1")].takenAt = 50;
  u.kubernetesMetrics->podsTakenAt = 70;
  u.prometheus["q"].nodes[api::Symbol("n1")].takenAt = 60;
  EXPECT_EQ(u.newestSample(), 70);
  EXPECT_NE(u.prometheusFor("q"), nullptr);
  EXPECT_EQ(u.prometheusFor("other"), nullptr);
}

TEST(Needs, DistinctQueriesInOrder) {
  Needs n;
  n.consumers = {{"a", "LowNodeUtilization", Source::Prometheus, "q2"},
                 {"b", "LowNodeUtilization", Source::KubernetesMetrics, ""},
                 {"c", "LowNodeUtilization", Source::Prometheus, "q1"},
                 {"d", "LowNodeUtilization", Source::Prometheus, "q2"}};
  EXPECT_TRUE(n.kubernetesMetrics());
  EXPECT_EQ(n.prometheusQueries(), (std::vector<std::string>{"q2", "q1"}));
}

}  // namespace
}  // namespace kdesched::usage
