// LowNodeUtilization by measured usage, through the real engine and plan sink. The tables port
// upstream's TestLowNodeUtilization "with metrics enabled" runs (each request-based scenario again
// with NodeMetrics and PodMetrics, expecting upstream's expectedPodsWithMetricsEvicted) and
// TestLowNodeUtilizationWithPrometheusMetrics, as data; then kdesched's own rules: a node without a
// usable sample is left out, a source that gave nothing skips the plugin, never requests instead.
#include <gtest/gtest.h>

#include <cmath>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;

const char* kPlugin = "LowNodeUtilization";
const std::string kNodeFit = "      nodeFit: true\n";
const std::string kCpuPods3050 =
    "      thresholds: {cpu: 30, pods: 30}\n"
    "      targetThresholds: {cpu: 50, pods: 50}\n";
const std::string kByMetricsServer = "      metricsUtilization:\n        source: KubernetesMetrics\n";
const std::string kMetricsServerProvider = "metricsProviders:\n- source: KubernetesMetrics\n";
const std::string kQuery = "instance:node_cpu:rate:sum";
const std::string kPrometheusProvider =
    "metricsProviders:\n- source: Prometheus\n  prometheus:\n    url: http://prometheus.monitoring:9090\n";
constexpr api::Timestamp kNow = 100000;  // runPolicy's clock

struct NodeMetric {
  std::string node;
  std::int64_t cpuMilli;
  std::int64_t memoryBytes;
};
struct PodMetric {
  std::string pod;
  std::int64_t cpuMilli;
  std::int64_t memoryBytes = 0;
  std::string ns = "default";
};

usage::ClusterUsage metricsServer(const std::vector<NodeMetric>& nodes, const std::vector<PodMetric>& pods,
                                  api::Timestamp takenAt = kNow) {
  usage::ClusterUsage u;
  u.asOf = kNow;
  usage::SourceReadings& r = u.kubernetesMetrics.emplace();
  r.origin = "metrics-server";
  for (const auto& n : nodes) r.nodes[api::Symbol(n.node)] = {n.cpuMilli, n.memoryBytes, std::nullopt, takenAt};
  for (const auto& p : pods) r.pods.add(p.ns, p.pod, p.cpuMilli, p.memoryBytes);
  r.podsTakenAt = takenAt;
  r.pods.finish();
  return u;
}

usage::ClusterUsage prometheus(const std::vector<std::pair<std::string, double>>& scores) {
  usage::ClusterUsage u;
  u.asOf = kNow;
  usage::SourceReadings& r = u.prometheus[kQuery];
  r.source = usage::Source::Prometheus;
  r.origin = "Prometheus";
  for (const auto& [node, score] : scores) r.nodes[api::Symbol(node)] = {std::nullopt, std::nullopt, score, kNow};
  return u;
}

NodePtr node(const std::string& name, std::int64_t cpu, std::int64_t mem, std::int64_t pods) {
  return NodeBuilder(name).allocatable(cpu, mem, pods).build();
}
NodePtr cordoned(const std::string& name) {
  return NodeBuilder(name).allocatable(4000, 3000, 10).unschedulable().build();
}
PodBuilder pod(const std::string& name, std::int64_t cpu, const std::string& on) {
  PodBuilder b(name);
  b.node(on).requests(cpu, 0).app(name);
  return b;
}
std::vector<NodePtr> threeNodes() { return {node("n1", 4000, 3000, 9), node("n2", 4000, 3000, 10), cordoned("n3")}; }
// p6 DaemonSet, p7 mirror with local storage, p8 system-critical: DefaultEvictor keeps them.
std::vector<PodPtr> keptPods() {
  return {pod("p6", 400, "n1").owner("DaemonSet", "ds").build(), pod("p7", 400, "n1").localStorage().mirror().build(),
          PodBuilder("p8", "kube-system").node("n1").requests(400, 0).priority(api::kSystemCriticalPriority).build()};
}
std::vector<PodPtr> basicPods() {
  std::vector<PodPtr> pods;
  for (int i = 1; i <= 5; ++i) pods.push_back(pod("p" + std::to_string(i), 400, "n1").build());
  for (auto& p : keptPods()) pods.push_back(p);
  pods.push_back(pod("p9", 400, "n2").build());
  return pods;
}
const std::vector<NodeMetric> kNodeMetrics = {{"n1", 3201, 0}, {"n2", 401, 0}, {"n3", 11, 0}};
const std::vector<PodMetric> kPodMetrics = {{"p1", 401}, {"p2", 401}, {"p3", 401}, {"p4", 401}, {"p5", 401}};

std::vector<std::string> names(std::initializer_list<const char*> pods) {
  std::vector<std::string> out;
  for (const char* p : pods) out.push_back(std::string("default/") + p);
  return out;
}

struct Case {
  std::string name;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::string args;  // thresholds etc., without metricsUtilization
  std::vector<NodeMetric> nodeMetrics;
  std::vector<PodMetric> podMetrics;
  std::vector<std::string> wantEvicted;
  bool wantPluginError = false;
};

PlanOutcome run(const Case& c) {
  ClusterBuilder b;
  for (auto& n : c.nodes) b.add(n);
  for (auto& p : c.pods) b.add(p);
  usage::ClusterUsage u = metricsServer(c.nodeMetrics, c.podMetrics);
  return runPolicy(policyWith(kPlugin, "balance", c.args + kByMetricsServer, kNodeFit, kMetricsServerProvider),
                   *b.snapshot(), kNow, &u);
}

class ByMetricsServer : public ::testing::TestWithParam<Case> {};

TEST_P(ByMetricsServer, EvictsAsUpstreamWithMetricsEnabled) {
  const Case& c = GetParam();
  PlanOutcome out = run(c);
  EXPECT_EQ(out.evicted, c.wantEvicted);
  ASSERT_EQ(out.cycle.runs.size(), 1u);
  EXPECT_EQ(out.cycle.runs[0].status.isOk(), !c.wantPluginError) << out.cycle.runs[0].status.message();
}

std::vector<Case> upstreamCases() {
  std::vector<Case> cs;
  std::vector<PodPtr> unevictable = {
      pod("p1", 400, "n1").owner("DaemonSet", "ds").build(), pod("p2", 400, "n1").owner("DaemonSet", "ds").build(),
      pod("p5", 400, "n1").localStorage().mirror().build(),
      PodBuilder("p6", "kube-system").node("n1").requests(400, 0).priority(api::kSystemCriticalPriority).build(),
      pod("p9", 400, "n2").build()};
  cs.push_back({"no evictable pods",
                threeNodes(),
                unevictable,
                kCpuPods3050,
                {{"n1", 2401, 1714978816}, {"n2", 401, 1714978816}, {"n3", 10, 1714978816}},
                kPodMetrics,
                {}});
  cs.push_back({"without priorities", threeNodes(), basicPods(), kCpuPods3050, kNodeMetrics, kPodMetrics,
                names({"p1", "p2", "p3", "p4"})});
  {
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 5; ++i)
      pods.push_back(PodBuilder("p" + std::to_string(i), "namespace1").node("n1").requests(400, 0).build());
    for (auto& p : keptPods()) pods.push_back(p);
    pods.push_back(pod("p9", 400, "n2").build());
    cs.push_back({"without priorities, but excluding namespaces",
                  threeNodes(),
                  pods,
                  kCpuPods3050 + "      evictableNamespaces: {exclude: [namespace1]}\n",
                  kNodeMetrics,
                  kPodMetrics,
                  {}});
  }
  {
    std::vector<PodPtr> pods = {pod("p1", 400, "n1").build(), pod("p2", 400, "n1").build()};
    for (int i = 3; i <= 5; ++i) {
      std::string n = std::to_string(i);
      pods.push_back(PodBuilder("p" + n, "namespace" + n).node("n1").requests(400, 0).build());
    }
    for (auto& p : keptPods()) pods.push_back(p);
    pods.push_back(pod("p9", 400, "n2").build());
    cs.push_back({"without priorities, but include only default namespace", threeNodes(), pods,
                  kCpuPods3050 + "      evictableNamespaces: {exclude: [namespace3, namespace4, namespace5]}\n",
                  kNodeMetrics, kPodMetrics, names({"p1", "p2"})});
  }
  cs.push_back({"without priorities stop when cpu capacity is depleted",
                threeNodes(),
                basicPods(),
                kCpuPods3050,
                {{"n1", 3201, 0}, {"n2", 401, 0}, {"n3", 0, 0}},
                kPodMetrics,
                names({"p1", "p2", "p3", "p4"})});
  {
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 4; ++i) pods.push_back(pod("p" + std::to_string(i), 400, "n1").priority(1000).build());
    pods.push_back(pod("p5", 400, "n1").priority(10).build());
    for (auto& p : keptPods()) pods.push_back(p);
    pods.push_back(pod("p9", 400, "n2").build());
    cs.push_back({"with priorities", threeNodes(), pods, kCpuPods3050, kNodeMetrics, kPodMetrics,
                  names({"p5", "p1", "p2", "p3"})});
  }
  {
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 5; ++i) {
      PodBuilder p = pod("p" + std::to_string(i), 400, "n1");
      if (i != 3) p.qos(api::QosClass::BestEffort);
      pods.push_back(p.build());
    }
    for (auto& p : keptPods()) pods.push_back(p);
    pods.push_back(pod("p9", 400, "n2").build());
    cs.push_back({"without priorities evicting best-effort pods only", threeNodes(), pods, kCpuPods3050, kNodeMetrics,
                  kPodMetrics, names({"p1", "p2", "p4", "p5"})});
  }
  return cs;
}

// The rest: extended resources (metrics-server has none), node selection, deviation, limits.
std::vector<Case> upstreamCasesContinued() {
  std::vector<Case> cs;
  const std::string kExtended =
      "      thresholds: {pods: 30, example.com/foo: 30}\n"
      "      targetThresholds: {pods: 50, example.com/foo: 50}\n";
  {
    // metrics-server reports no example.com/foo: upstream's sync fails, and so does the plugin here.
    std::vector<NodePtr> nodes = {NodeBuilder("n1").allocatable(4000, 3000, 9).extended("example.com/foo", 8).build(),
                                  NodeBuilder("n2").allocatable(4000, 3000, 10).extended("example.com/foo", 8).build(),
                                  cordoned("n3")};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 6; ++i)
      pods.push_back(pod("p" + std::to_string(i), 0, "n1").request("example.com/foo", 1000).build());
    pods.push_back(pod("p9", 0, "n2").request("example.com/foo", 1000).build());
    cs.push_back({"with extended resource", nodes, pods, kExtended, kNodeMetrics, kPodMetrics, {}, true});
    std::vector<NodePtr> some = {nodes[0], node("n2", 4000, 3000, 10), nodes[2]};
    cs.push_back(
        {"with extended resource in some of nodes", some, pods, kExtended, kNodeMetrics, kPodMetrics, {}, true});
    cs.push_back({"with extended resource in some of nodes with deviation",
                  nodes,
                  pods,
                  "      useDeviationThresholds: true\n"
                  "      thresholds: {pods: 5, example.com/foo: 10}\n"
                  "      targetThresholds: {pods: 5, example.com/foo: 10}\n",
                  kNodeMetrics,
                  kPodMetrics,
                  {},
                  true});
  }
  {
    std::vector<NodePtr> nodes = {node("n1", 4000, 3000, 9), cordoned("n2")};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 5; ++i) pods.push_back(pod("p" + std::to_string(i), 400, "n1").build());
    for (auto& p : keptPods()) pods.push_back(p);
    cs.push_back({"without priorities, but only other node is unschedulable",
                  nodes,
                  pods,
                  kCpuPods3050,
                  {{"n1", 3201, 0}, {"n2", 401, 0}},
                  kPodMetrics,
                  {}});
  }
  {
    std::vector<NodePtr> nodes = {node("n1", 4000, 3000, 9),
                                  NodeBuilder("n2").allocatable(4000, 3000, 10).label("datacenter", "east").build()};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 3; ++i) pods.push_back(pod("p" + std::to_string(i), 400, "n1").build());
    pods.push_back(pod("p4", 400, "n1").nodeSelector("datacenter", "west").build());
    pods.push_back(pod("p5", 400, "n1").requiredNodeAffinity("datacenter", api::NodeSelectorOp::In, {"west"}).build());
    for (auto& p : keptPods()) pods.push_back(p);
    pods.push_back(pod("p9", 0, "n2").build());
    cs.push_back({"without priorities, but only other node doesn't match pod node selector or affinity for p4 and p5",
                  nodes,
                  pods,
                  kCpuPods3050,
                  {{"n1", 3201, 0}, {"n2", 401, 0}},
                  kPodMetrics,
                  names({"p1", "p2", "p3"})});
    // Usage says each of p1..p3 takes 801m: two fill n2's room; requests (400m) would move three.
    std::vector<PodPtr> affine(pods);
    affine[3] = pod("p4", 400, "n1").requiredNodeAffinity("datacenter", api::NodeSelectorOp::In, {"west"}).build();
    cs.push_back({"without priorities different evictions for requested and actual resources",
                  nodes,
                  affine,
                  kCpuPods3050,
                  {{"n1", 3201, 0}, {"n2", 401, 0}},
                  {{"p1", 801}, {"p2", 801}, {"p3", 801}},
                  names({"p1", "p2"})});
  }
  cs.push_back({"deviation thresholds", threeNodes(), basicPods(),
                "      useDeviationThresholds: true\n"
                "      thresholds: {cpu: 5, pods: 5}\n"
                "      targetThresholds: {cpu: 5, pods: 5}\n",
                kNodeMetrics, kPodMetrics, names({"p1", "p2"})});
  {
    std::vector<NodePtr> nodes = {node("n1", 4000, 3000, 10), node("n2", 4000, 3000, 10), cordoned("n3")};
    std::vector<PodPtr> pods;
    for (int i = 1; i <= 5; ++i) pods.push_back(pod("p" + std::to_string(i), 400, "n1").build());
    for (auto& p : keptPods()) pods.push_back(p);
    pods.push_back(pod("p9", 400, "n2").build());
    std::vector<PodMetric> podMetrics;
    for (int i = 1; i <= 8; ++i) podMetrics.push_back({"p" + std::to_string(i), 400, 375});
    podMetrics.push_back({"p9", 400, 3000});
    cs.push_back({"deviation thresholds and overevicting memory",
                  nodes,
                  pods,
                  "      useDeviationThresholds: true\n"
                  "      thresholds: {cpu: 5, pods: 5}\n"
                  "      targetThresholds: {cpu: 5, pods: 5}\n",
                  {{"n1", 4000, 3000}, {"n2", 4000, 3000}, {"n3", 4000, 3000}},
                  podMetrics,
                  {}});
  }
  cs.push_back({"without priorities with node eviction limit", threeNodes(), basicPods(),
                kCpuPods3050 + "      evictionLimits: {node: 2}\n", kNodeMetrics, kPodMetrics, names({"p1", "p2"})});
  return cs;
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

std::vector<Case> allUpstreamCases() {
  std::vector<Case> cs = upstreamCases();
  for (Case& c : upstreamCasesContinued()) cs.push_back(std::move(c));
  return cs;
}

INSTANTIATE_TEST_SUITE_P(Upstream, ByMetricsServer, ::testing::ValuesIn(allUpstreamCases()), caseName);

// TestLowNodeUtilizationWithPrometheusMetrics: samples n1 0.57, n2 0.42, n3 0.20 unless given.
struct PromCase {
  std::string name;
  std::string args;
  std::vector<std::pair<std::string, double>> scores;
  std::size_t wantEvicted;
};

class ByPrometheus : public ::testing::TestWithParam<PromCase> {};

PlanOutcome runPrometheus(const std::string& args, const std::vector<std::pair<std::string, double>>& scores) {
  ClusterBuilder b;
  b.add(node("n1", 4000, 3000, 9)).add(node("n2", 4000, 3000, 10)).add(node("n3", 4000, 3000, 10));
  for (int i = 1; i <= 5; ++i) b.add(pod("p" + std::to_string(i), 400, "n1").build());
  for (auto& p : keptPods()) b.add(p);
  b.add(pod("p9", 400, "n2").build());
  usage::ClusterUsage u = prometheus(scores);
  std::string metrics =
      "      metricsUtilization:\n        source: Prometheus\n        prometheus:\n          query: " + kQuery + "\n";
  return runPolicy(policyWith(kPlugin, "balance", args + metrics, kNodeFit, kPrometheusProvider), *b.snapshot(), kNow,
                   &u);
}

TEST_P(ByPrometheus, EvictsAsUpstream) {
  const PromCase& c = GetParam();
  PlanOutcome out = runPrometheus(c.args, c.scores);
  EXPECT_EQ(out.evicted.size(), c.wantEvicted);
  for (const auto& r : out.cycle.runs) EXPECT_TRUE(r.status.isOk()) << r.status.message();
}

const std::vector<std::pair<std::string, double>> kScores = {
    {"n1", 0.5695757575757561}, {"n2", 0.4245454545454522}, {"n3", 0.20381818181818104}};
const std::string kMetric3050 =
    "      thresholds: {MetricResource: 30}\n      targetThresholds: {MetricResource: 50}\n";

INSTANTIATE_TEST_SUITE_P(
    Upstream, ByPrometheus,
    ::testing::Values(PromCase{"one pod per overutilized node", kMetric3050, kScores, 1},
                      PromCase{"with more evictions", kMetric3050 + "      evictionLimits: {node: 3}\n", kScores, 3},
                      PromCase{"with deviation",
                               "      useDeviationThresholds: true\n      thresholds: {MetricResource: 5}\n"
                               "      targetThresholds: {MetricResource: 5}\n      evictionLimits: {node: 2}\n",
                               kScores, 2},
                      PromCase{"with deviation thresholds",
                               "      useDeviationThresholds: true\n      thresholds: {MetricResource: 10}\n"
                               "      targetThresholds: {MetricResource: 10}\n",
                               {{"n1", 1}, {"n2", 0.5}, {"n3", 0}},
                               1}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (auto& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

}  // namespace
}  // namespace kdesched::testing
