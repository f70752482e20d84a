// The metrics-server collector over a scripted API: upstream's moving average, one LIST per
// collection (paged), nodes that vanish, failure and recovery (reading down, metric, one log line
// each way), one PodMetrics LIST per cycle, the thread and the bounded first wait (which a LIST
// with none of the cluster's nodes does not end).
#include "pkg/daemon/metrics_server_collector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/daemon/usage_fakes.h"
#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

using daemon::MetricsServerCollector;
using daemon::SourceHealth;
using kube::testing::LogCapture;
using ::testing::HasSubstr;

const std::string kUp = "kdesched_usage_source_up{source=\"KubernetesMetrics\"}";

struct Fixture {
  FakeApi api;
  metrics::Metrics metrics{"test", {}};
  SourceHealth health{"KubernetesMetrics", "metrics-server", &metrics};
  std::set<std::string> cluster{"n1", "n2"};
  MetricsServerCollector collector{*api.client, api.clock,
                                   [this](const std::string& n) { return cluster.count(n) != 0; }, health};

  void answer(const std::string& body, int status = 200) { api.transport->onSend(Scripted::json(body, status)); }
  usage::NodeSample node(const std::string& name, bool pods = false) {
    usage::SourceReadings r = collector.readings(pods);
    EXPECT_FALSE(r.down) << *r.down;
    const usage::NodeSample* s = r.node(api::Symbol(name));
    EXPECT_NE(s, nullptr) << name;
    return s ? *s : usage::NodeSample{};
  }
};

TEST(MetricsServerCollector, FoldsEachCollectionIntoUpstreamsMovingAverage) {
  Fixture f;
  f.answer(nodeMetricsList({{"n1", "1000m", "1000Mi", "2026-01-01T00:00:00Z"}}));
  f.answer(nodeMetricsList({{"n1", "2000m", "2000Mi", "2026-01-01T00:00:15Z"}}));
  f.answer(nodeMetricsList({{"n1", "2000m", "2000Mi", "2026-01-01T00:00:15Z"}}));
  ASSERT_TRUE(f.collector.collect());
  EXPECT_EQ(f.node("n1").cpuMilli, 1000);  // the first sample as it is
  ASSERT_TRUE(f.collector.collect());
  EXPECT_EQ(f.node("n1").cpuMilli, 1100);  // round(0.9·1000 + 0.1·2000)
  EXPECT_EQ(f.node("n1").memoryBytes, 1100 * kMi);
  EXPECT_EQ(f.node("n1").takenAt, 1767225615);
  ASSERT_TRUE(f.collector.collect());  // the same sample again still moves the average, as upstream
  EXPECT_EQ(f.node("n1").cpuMilli, 1190);
  // One LIST of the collection per collection, never a GET per node.
  const auto sent = f.api.transport->sent();
  ASSERT_EQ(sent.size(), 3u);
  for (const auto& s : sent) EXPECT_EQ(s.target, "/apis/metrics.k8s.io/v1beta1/nodes?limit=500");
}

TEST(MetricsServerCollector, FollowsTheListsPages) {
  Fixture f;
  f.answer(nodeMetricsList({{"n1", "1", "1Gi"}}, "page2"));
  f.answer(nodeMetricsList({{"n2", "2", "2Gi"}}));
  ASSERT_TRUE(f.collector.collect());
  EXPECT_EQ(f.node("n1").cpuMilli, 1000);
  EXPECT_EQ(f.node("n2").cpuMilli, 2000);
  ASSERT_EQ(f.api.transport->sent().size(), 2u);
  EXPECT_EQ(f.api.transport->sent()[1].target, "/apis/metrics.k8s.io/v1beta1/nodes?limit=500&continue=page2");
}

TEST(MetricsServerCollector, ForgetsNodesThatLeaveTheClusterAndKeepsThoseMissingFromOneList) {
  Fixture f;
  f.answer(nodeMetricsList({{"n1", "1", "1Gi"}, {"n2", "2", "2Gi"}, {"stranger", "3", "3Gi"}}));
  f.answer(nodeMetricsList({{"n1", "1", "1Gi", "2026-01-01T00:01:00Z"}}));
  ASSERT_TRUE(f.collector.collect());
  // A node the cluster does not have is not taken.
  EXPECT_EQ(f.collector.readings(false).node(api::Symbol("stranger")), nullptr);
  ASSERT_TRUE(f.collector.collect());
  // n2 is missing from this LIST: it keeps its average and its old time (staleness leaves it out).
  EXPECT_EQ(f.node("n2").cpuMilli, 2000);
  EXPECT_EQ(f.node("n2").takenAt, 1767225600);
  f.cluster.erase("n2");
  f.answer(nodeMetricsList({{"n1", "1", "1Gi"}, {"n2", "2", "2Gi"}}));
  ASSERT_TRUE(f.collector.collect());
  EXPECT_EQ(f.collector.readings(false).node(api::Symbol("n2")), nullptr);
  EXPECT_EQ(f.collector.readings(false).nodes.size(), 1u);
}

TEST(MetricsServerCollector, ASampleWithoutCpuIsNotReadAsZero) {
  Fixture f;
  f.answer(nodeMetricsList({{"n1", "1", "1Gi"}}));
  f.answer(R"({"kind":"NodeMetricsList","items":[{"metadata":{"name":"n1"},"timestamp":"2026-01-01T00:00:05Z",)"
           R"("usage":{"memory":"1Gi"}}]})");
  ASSERT_TRUE(f.collector.collect());
  ASSERT_TRUE(f.collector.collect());
  EXPECT_FALSE(f.node("n1").cpuMilli.has_value());
  EXPECT_EQ(f.node("n1").memoryBytes, kGi);
}

TEST(MetricsServerCollector, IsDownBeforeItsFirstCollection) {
  Fixture f;
  usage::SourceReadings r = f.collector.readings(true);
  ASSERT_TRUE(r.down);
  EXPECT_EQ(*r.down, "no NodeMetrics collected yet");
  EXPECT_TRUE(f.api.transport->sent().empty());  // no PodMetrics LIST for a reading that is down
}

TEST(MetricsServerCollector, AFailedListIsDownWithTheMetricAndOneLineEachWay) {
  LogCapture logs;
  Fixture f;
  f.answer(nodeMetricsList({{"n1", "1", "1Gi"}}));
  ASSERT_TRUE(f.collector.collect());
  EXPECT_EQ(metricValue(f.metrics, kUp), 1);
  f.answer(apiStatus(503, "ServiceUnavailable"), 503);
  f.answer(apiStatus(503, "ServiceUnavailable"), 503);
  EXPECT_FALSE(f.collector.collect());
  EXPECT_FALSE(f.collector.collect());
  EXPECT_EQ(metricValue(f.metrics, kUp), 0);
  usage::SourceReadings r = f.collector.readings(true);
  ASSERT_TRUE(r.down);
  EXPECT_THAT(*r.down, HasSubstr("NodeMetrics list failed: 503"));
  EXPECT_THAT(*r.down, HasSubstr("is metrics-server running"));
  EXPECT_TRUE(r.nodes.empty());  // the old averages are not handed to a cycle
  f.answer(nodeMetricsList({{"n1", "3", "1Gi"}}));
  ASSERT_TRUE(f.collector.collect());
  EXPECT_EQ(metricValue(f.metrics, kUp), 1);
  EXPECT_EQ(f.node("n1").cpuMilli, 1200);  // the average survived the outage
  int failing = 0, recovered = 0;
  for (const auto& l : logs.lines()) {
    failing += l.find("usage source failing") != std::string::npos;
    recovered += l.find("usage source answers again") != std::string::npos;
  }
  EXPECT_EQ(failing, 1);
  EXPECT_EQ(recovered, 1);
}

TEST(MetricsServerCollector, ARefusedListNamesTheMissingPermission) {
  Fixture f;
  f.answer(apiStatus(403, "Forbidden"), 403);
  EXPECT_FALSE(f.collector.collect());
  EXPECT_THAT(*f.collector.readings(false).down, HasSubstr("needs list on nodes and pods in the metrics.k8s.io"));
}

TEST(MetricsServerCollector, ReadsPodMetricsOnceForEachReadingThatAsks) {
  Fixture f;
  f.answer(nodeMetricsList({{"n1", "1", "1Gi"}}));
  ASSERT_TRUE(f.collector.collect());
  f.answer(podMetricsList({{"a1", "400m", "256Mi"}, {"a2", "100m", "64Mi"}}));
  usage::SourceReadings r = f.collector.readings(true);
  ASSERT_FALSE(r.down);
  EXPECT_EQ(f.api.sentTo("/apis/metrics.k8s.io/v1beta1/pods"), 1u);
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods.find("default", "a1")->cpuMilli, 400);
  f.collector.readings(false);
  EXPECT_EQ(f.api.sentTo("/apis/metrics.k8s.io/v1beta1/pods"), 1u);
  // A failed PodMetrics LIST makes the whole reading down (pod usage is how evictions are counted).
  f.answer(apiStatus(500, "InternalError"), 500);
  r = f.collector.readings(true);
  EXPECT_EQ(f.api.sentTo("/apis/metrics.k8s.io/v1beta1/pods"), 2u);
  ASSERT_TRUE(r.down);
  EXPECT_THAT(*r.down, HasSubstr("PodMetrics list failed: 500"));
  EXPECT_EQ(metricValue(f.metrics, kUp), 0);
}

TEST(MetricsServerCollector, WaitsForItsFirstCollectionBounded) {
  Fixture f;
  Cancellation stop;
  EXPECT_FALSE(f.collector.waitForFirst(std::chrono::seconds(5), stop));
  EXPECT_EQ(f.api.clock->sleeps().size(), 5u);  // looked once a second, as upstream
  f.answer(nodeMetricsList({{"n1", "1", "1Gi"}}));
  ASSERT_TRUE(f.collector.collect());
  EXPECT_TRUE(f.collector.waitForFirst(std::chrono::seconds(5), stop));
}

// Right after metrics-server starts it answers the LIST with no node (none scraped twice yet): the
// source is up, but that is no first collection, so the bounded first wait goes on (a one-shot run
// started then would otherwise skip for want of numbers a few seconds away).
TEST(MetricsServerCollector, AListWithNoneOfTheClustersNodesIsNotTheFirstCollection) {
  LogCapture logs;
  Fixture f;
  f.answer(nodeMetricsList({}));
  f.answer(nodeMetricsList({{"gone", "1", "1Gi"}}));  // a node the cluster does not have
  f.answer(nodeMetricsList({{"n1", "1", "1Gi"}}));
  EXPECT_TRUE(f.collector.collect());
  EXPECT_EQ(metricValue(f.metrics, kUp), 1);  // it answered
  EXPECT_FALSE(f.collector.synced());
  usage::SourceReadings r = f.collector.readings(true);
  ASSERT_TRUE(r.down);
  EXPECT_EQ(*r.down, "no NodeMetrics collected yet (metrics-server lists none of the cluster's nodes yet)");
  EXPECT_TRUE(f.collector.collect());
  Cancellation stop;
  EXPECT_FALSE(f.collector.waitForFirst(std::chrono::seconds(2), stop));
  ASSERT_TRUE(f.collector.collect());
  EXPECT_TRUE(f.collector.synced());
  EXPECT_EQ(f.node("n1").cpuMilli, 1000);
  int noneYet = 0, first = 0;
  for (const auto& l : logs.lines()) {
    noneYet += l.find("lists none of the cluster's nodes yet") != std::string::npos;
    first += l.find("first collection") != std::string::npos;
  }
  EXPECT_EQ(noneYet, 1);  // once, not per LIST
  EXPECT_EQ(first, 1);
}

TEST(MetricsServerCollector, CollectsOnItsOwnThreadUntilStopped) {
  Fixture f;
  f.answer(nodeMetricsList({{"n1", "1", "1Gi"}}));
  Cancellation stop;
  f.collector.start(stop);
  // The next collection, 5 s later on the fake clock, waits on an unscripted answer until stopped.
  EXPECT_TRUE(kube::testing::waitUntil([&] { return f.api.transport->sent().size() >= 2; }));
  EXPECT_TRUE(f.collector.synced());
  EXPECT_TRUE(kube::testing::returns([&] { stop.cancel(); }));
  EXPECT_TRUE(kube::testing::returns([&] { f.collector.stop(); }));
  EXPECT_EQ(f.api.clock->sleeps().front(), std::chrono::seconds(5));
}

}  // namespace
}  // namespace kdesched::testing
