// The benchmark generator's measured usage (kdesched-gen --metrics, --prometheus-answer): loadable
// by `kdesched plan`'s loader, for every node and pod, consistent between nodes and pods, hot
// where requests are hot, deterministic, and without changing the generated cluster.
#include "bench/cluster_gen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "pkg/cluster/loader.h"
#include "pkg/engine/engine.h"
#include "pkg/plan/usage_input.h"
#include "pkg/usage/decode.h"

namespace kdesched::bench {
namespace {

GenOptions small() {
  GenOptions o;
  o.nodes = 40;
  o.pods = 1200;
  o.namespaces = 8;
  o.violations = 6;
  o.idleShare = 0.05;
  return o;
}

struct Loaded {
  cluster::Store store;
  cluster::SnapshotPtr snapshot;
  usage::SourceReadings metrics;
};

std::unique_ptr<Loaded> load(const std::string& json) {
  auto l = std::make_unique<Loaded>();
  auto r = cluster::loadSnapshot(json, "generated", l->store, &l->metrics);
  EXPECT_TRUE(r.isOk()) << r.error();
  l->snapshot = l->store.snapshot();
  return l;
}

TEST(ClusterGenMetrics, TheClusterIsTheSameWithOrWithoutMetrics) {
  GenOptions o = small();
  const std::string plain = generateSnapshotJson(o);
  o.metrics = true;
  std::string answer;
  const std::string withMetrics = generateSnapshotJson(o, nullptr, &answer);
  ASSERT_GT(withMetrics.size(), plain.size());
  EXPECT_EQ(withMetrics.substr(0, plain.size()), plain);
}

TEST(ClusterGenMetrics, EveryNodeAndPodHasASampleAndNodesSumTheirPods) {
  GenOptions o = small();
  o.metrics = true;
  auto l = load(generateSnapshotJson(o));
  EXPECT_EQ(l->metrics.nodes.size(), static_cast<std::size_t>(o.nodes));
  EXPECT_EQ(l->metrics.pods.size(), l->snapshot->podCount());
  EXPECT_EQ(l->metrics.pods.dropped(), 0u);
  EXPECT_TRUE(l->metrics.notes.empty());
  EXPECT_EQ(l->metrics.podsTakenAt, kMetricsUnixTime);
  for (const api::Node* node : l->snapshot->nodes()) {
    const usage::NodeSample* s = l->metrics.node(node->nameSym);
    ASSERT_NE(s, nullptr) << node->name;
    EXPECT_EQ(s->takenAt, kMetricsUnixTime);
    std::int64_t cpu = 150, mem = 768LL << 20;  // the system's share
    std::size_t pods = 0;
    for (const api::Pod* p : l->snapshot->podsOnNode(node->nameSym)) {
      auto u = l->metrics.pods.find(*p);
      ASSERT_TRUE(u.has_value()) << p->key();
      cpu += u->cpuMilli;
      mem += u->memoryBytes;
      ++pods;
    }
    // Pods' cpu is rounded up to whole millicores one by one, the node's once.
    EXPECT_NEAR(static_cast<double>(*s->cpuMilli), static_cast<double>(cpu), static_cast<double>(pods + 1));
    EXPECT_EQ(*s->memoryBytes, mem) << node->name;
  }
}

// By requests the first tenth of the nodes are the busy ones; by usage they are busier still: their
// pods use more than they request (factor 1.2-1.5), the others' about what they request (0.8-1.2).
TEST(ClusterGenMetrics, HotNodesAreHotterByUsageThanByRequests) {
  GenOptions o = small();
  o.metrics = true;
  auto l = load(generateSnapshotJson(o));
  double hot = 0, rest = 0;
  int hotNodes = 0, restNodes = 0;
  for (const api::Node* node : l->snapshot->nodes()) {
    std::int64_t requested = 0;
    for (const api::Pod* p : l->snapshot->podsOnNode(node->nameSym)) requested += p->requests.get(api::kCpu());
    if (requested == 0) continue;
    const double used = static_cast<double>(*l->metrics.node(node->nameSym)->cpuMilli - 150);
    const double ratio = used / static_cast<double>(requested);
    if (std::stoi(node->name.substr(5)) < o.nodes / 10) {  // node-<i>
      hot += ratio;
      ++hotNodes;
    } else {
      rest += ratio;
      ++restNodes;
    }
  }
  ASSERT_GT(hotNodes, 0);
  ASSERT_GT(restNodes, 0);
  EXPECT_GT(hot / hotNodes, 1.25);
  EXPECT_NEAR(rest / restNodes, 1.0, 0.1);
}

TEST(ClusterGenMetrics, DeterministicPerSeed) {
  GenOptions o = small();
  o.metrics = true;
  std::string a1, a2, a3;
  const std::string s1 = generateSnapshotJson(o, nullptr, &a1);
  EXPECT_EQ(generateSnapshotJson(o, nullptr, &a2), s1);
  EXPECT_EQ(a2, a1);
  o.seed = 2;
  EXPECT_NE(generateSnapshotJson(o, nullptr, &a3), s1);
  EXPECT_NE(a3, a1);
}

TEST(ClusterGenMetrics, PrometheusAnswerScoresCpuUsageOverAllocatable) {
  GenOptions o = small();
  o.metrics = true;
  std::string answer;
  auto l = load(generateSnapshotJson(o, nullptr, &answer));
  usage::SourceReadings prom;
  prom.source = usage::Source::Prometheus;
  ASSERT_TRUE(usage::decodePrometheusAnswer(answer, prom).isOk());
  ASSERT_EQ(prom.nodes.size(), static_cast<std::size_t>(o.nodes));
  for (const auto& [name, sample] : prom.nodes) {
    ASSERT_TRUE(sample.score.has_value());
    const double cpu = static_cast<double>(*l->metrics.node(name)->cpuMilli);
    EXPECT_NEAR(*sample.score, std::min(1.0, cpu / 31500), 1e-3) << name.str();
    EXPECT_EQ(sample.takenAt, kMetricsUnixTime);
  }
}

TEST(ClusterGenMetrics, OnlyForListSnapshots) {
  GenOptions o = small();
  o.metrics = true;
  o.format = GenFormat::NdJson;
  EXPECT_THROW(generateSnapshotJson(o), std::invalid_argument);
}

// The point of the metrics: LowNodeUtilization by usage finds work on them, as by requests.
TEST(ClusterGenMetrics, LowNodeUtilizationByUsageEvicts) {
  GenOptions o = small();
  o.metrics = true;
  auto l = load(generateSnapshotJson(o));
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds::pinned(kMetricsUnixTime + 15);
  auto engine = engine::buildEngineFromText(
      "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmetricsProviders:\n- source: KubernetesMetrics\n"
      "profiles:\n- name: p\n  pluginConfig:\n  - name: DefaultEvictor\n  - name: LowNodeUtilization\n"
      "    args: {thresholds: {cpu: 20, memory: 20, pods: 20}, targetThresholds: {cpu: 50, memory: 50, pods: 50},\n"
      "           metricsUtilization: {source: KubernetesMetrics}}\n"
      "  plugins:\n    balance: {enabled: [LowNodeUtilization]}\n",
      "policy.yaml", ctx);
  ASSERT_TRUE(engine.isOk()) << engine.error();
  std::vector<std::string> notes;
  auto u = plan::planUsage({std::move(l->metrics), "generated", "", std::nullopt}, engine->usageNeeds(), notes);
  ASSERT_TRUE(u.isOk()) << u.error();
  evictor::PlanSink sink;
  evictor::EvictionChain chain(engine->limits(), sink);
  framework::CycleResult r = engine->runCycle(*l->snapshot, chain, nullptr, {}, &*u);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_TRUE(r.runs[0].status.isOk()) << r.runs[0].status.message();
  EXPECT_GT(sink.evictions().size(), 0u);
  for (const auto& e : sink.evictions())
    EXPECT_NE(e.reason.find("metrics-server usage"), std::string::npos) << e.reason;
}

}  // namespace
}  // namespace kdesched::bench
