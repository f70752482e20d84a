// `kdesched plan` balancing by measured usage, through the real binary: NodeMetrics/PodMetrics in
// the snapshot (examples/usage-metrics-server), a saved Prometheus answer (--prometheus-result,
// examples/usage-prometheus), and the errors for usage the policy needs and the input lacks.
// UPDATE_GOLDEN=1 rewrites the golden files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test/unit/plan/cli.h"

namespace {

using kdesched::testing::CmdResult;
using kdesched::testing::example;
using kdesched::testing::expectGolden;
using kdesched::testing::kSrc;
using kdesched::testing::readFile;
using kdesched::testing::run;
namespace fs = std::filesystem;

fs::path tempFile(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("kdesched-usage-plan-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

TEST(UsagePlan, MetricsServerMovesWhatUsageSaysAndRequestsHide) {
  CmdResult r = run(example("usage-metrics-server"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectGolden(r.out, "usage-metrics-server.table.golden");
  // node1 uses 95% of its cpu: two 900m pods bring it to 50%, at or below the 70% target.
  EXPECT_NE(r.out.find("web-5f7d8-a1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("web-5f7d8-a2"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("web-5f7d8-a3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node node1 is overutilized by metrics-server usage (cpu 95% > 70%"), std::string::npos)
      << r.out;
  // The same cluster by requests: every node at 50% cpu, nothing to do.
  fs::path byRequests = tempFile("requests.yaml",
                                 "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n"
                                 "profiles:\n- name: default\n  pluginConfig:\n"
                                 "  - name: LowNodeUtilization\n    args:\n"
                                 "      thresholds: {cpu: 30, memory: 30, pods: 30}\n"
                                 "      targetThresholds: {cpu: 70, memory: 70, pods: 70}\n"
                                 "  plugins:\n    balance:\n      enabled: [LowNodeUtilization]\n");
  CmdResult req = run("plan --snapshot " + (kSrc / "examples/usage-metrics-server/snapshot.json").string() +
                      " --policy-config-file " + byRequests.string() + " --now 2026-11-30T10:00:00Z");
  fs::remove(byRequests);
  ASSERT_EQ(req.exitCode, 0) << req.err;
  EXPECT_NE(req.out.find("No evictions."), std::string::npos) << req.out;
}

TEST(UsagePlan, PrometheusAnswerFromAFile) {
  const fs::path answer = kSrc / "examples/usage-prometheus/prometheus-result.json";
  CmdResult r = run(example("usage-prometheus") + " --prometheus-result " + answer.string());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectGolden(r.out, "usage-prometheus.table.golden");
  EXPECT_NE(r.out.find("Summary: 1 eviction,"), std::string::npos) << r.out;
}

TEST(UsagePlan, MissingUsageIsAnErrorNamingWhatToAdd) {
  // The cluster without its NodeMetrics/PodMetrics documents.
  CmdResult r = run(example("usage-metrics-server", "../usage-prometheus/snapshot.json"));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("the policy balances by metrics-server usage (LowNodeUtilization in profile \"default\") and "
                       "the snapshot has no NodeMetrics: add the output of `kubectl get --raw "
                       "/apis/metrics.k8s.io/v1beta1/nodes` to it"),
            std::string::npos)
      << r.err;
  CmdResult prom = run(example("usage-prometheus"));
  EXPECT_EQ(prom.exitCode, 2);
  EXPECT_NE(prom.err.find("the policy balances by the Prometheus query instance:node_cpu:rate:sum (LowNodeUtilization "
                          "in profile \"default\"): give its answer with --prometheus-result FILE"),
            std::string::npos)
      << prom.err;
}

TEST(UsagePlan, BadPrometheusAnswersAreUpstreamsErrors) {
  fs::path matrix = tempFile("matrix.json", R"({"status":"success","data":{"resultType":"matrix","result":[]}})");
  CmdResult r = run(example("usage-prometheus") + " --prometheus-result " + matrix.string());
  fs::remove(matrix);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("expected query results to be of type \"vector\", got \"matrix\" instead"), std::string::npos)
      << r.err;
  fs::path unused = kSrc / "examples/usage-prometheus/prometheus-result.json";
  CmdResult extra = run(example("usage-metrics-server") + " --prometheus-result " + unused.string());
  EXPECT_EQ(extra.exitCode, 2);
  EXPECT_NE(extra.err.find("--prometheus-result: no plugin of the policy balances by a Prometheus query"),
            std::string::npos)
      << extra.err;
}

TEST(UsagePlan, StaleSamplesAgainstNowAreLeftOut) {
  // An hour later every sample is stale: the plugin skips, and says why, rather than use requests.
  CmdResult r = run(example("usage-metrics-server", "snapshot.json", "2026-11-30T11:00:00Z"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("No evictions."), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("no usable sample from metrics-server for any of the 3 nodes"), std::string::npos) << r.err;
}

}  // namespace
