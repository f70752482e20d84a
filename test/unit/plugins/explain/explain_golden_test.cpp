// `kdesched plan --explain` on each plugin's worked example, in-process: for the pods asked about,
// what every profile and plugin made of them, compared with test/testdata/explain/<case>.{table,json}.golden.
// Each case asks about a pod the plugin acts on and pods it passes over, so each plugin's
// pass-over reasons (with their numbers) are pinned. UPDATE_GOLDEN=1 rewrites the goldens.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pkg/plan/plan.h"
#include "test/unit/plugins/plan_golden.h"

namespace {

namespace fs = std::filesystem;
using kdesched::plan::OutputFormat;
using kdesched::testing::kSourceDir;

struct Case {
  const char* name;
  const char* snapshot;  // relative to the source tree
  const char* policy;
  std::vector<std::string> pods;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"antiaffinity",
       "examples/mixed/snapshot.json",
       "policies/anti-affinity.yaml",
       {"shop/checkout-0", "shop/cart-0", "shop/web-0"}},
      {"nodeaffinity", "examples/mixed/snapshot.json", "policies/node-affinity.yaml", {"shop/report-0", "shop/web-0"}},
      {"removeduplicates",
       "examples/mixed/snapshot.json",
       "policies/remove-duplicates.yaml",
       {"shop/batch-0", "shop/batch-1", "shop/web-0"}},
      {"defaultpolicy", "examples/mixed/snapshot.json", "policies/default.yaml", {"shop/cache-0", "shop/api-0"}},
      {"highnodeutilization",
       "test/testdata/highnodeutilization/snapshot.json",
       "policies/high-node-utilization.yaml",
       {"shop/worker-6c4d-2", "shop/db-00", "kube-system/log-agent-node3"}},
      {"lownodeutilization",
       "test/testdata/lownodeutilization/snapshot.json",
       "test/testdata/lownodeutilization/policy.yaml",
       {"analytics/analytics-9e2f-1", "shop/cache-0", "shop/shop-84b2-1", "shop/api-7f9c-1"}},
      {"podlifetime",
       "test/testdata/podlifetime/snapshot.json",
       "test/testdata/podlifetime/policy.yaml",
       {"shop/report-8d2e-1", "shop/cache-0", "shop/api-5f7c-2", "kube-system/dns-6b9d-1"}},
      {"removefailedpods",
       "test/testdata/removefailedpods/snapshot.yaml",
       "test/testdata/removefailedpods/policy.yaml",
       {"batch/import-28473-x7k2p", "batch/import-28474-q9w3z", "shop/db-0", "shop/debug"}},
      {"removepodshavingtoomanyrestarts",
       "test/testdata/removepodshavingtoomanyrestarts/snapshot.yaml",
       "test/testdata/removepodshavingtoomanyrestarts/policy.yaml",
       {"shop/api-6f7d8c9b5-d3e4f", "shop/worker-5b6c7d8e9-g5h6i", "shop/cache-0"}},
      {"removepodsviolatingnodetaints",
       "test/testdata/removepodsviolatingnodetaints/snapshot.json",
       "policies/node-taints.yaml",
       {"shop/web-5d8b-2", "ml/train-3c1e-1", "shop/web-5d8b-1"}},
      {"topologyspread",
       "test/testdata/topologyspread/snapshot.json",
       "test/testdata/topologyspread/policy.yaml",
       {"shop/web-7d9f8c6b5-c4r8w", "shop/api-5c8d7f9a4-q6t1z", "shop/web-7d9f8c6b5-p8s3j", "shop/web-exporter-a1"}},
  };
  return all;
}

struct PlanRun {
  kdesched::Status status;
  std::string out;
};

PlanRun explain(const Case& c, OutputFormat format) {
  kdesched::plan::PlanOptions options;
  options.snapshotPath = (kSourceDir / c.snapshot).string();
  options.policyPath = (kSourceDir / c.policy).string();
  options.format = format;
  options.now = kdesched::testing::kPlanNow;
  options.explain = c.pods;
  std::ostringstream out;
  kdesched::Status st = kdesched::plan::runPlan(options, out);
  return {st, out.str()};
}

class ExplainGolden : public ::testing::TestWithParam<Case> {};

TEST_P(ExplainGolden, Table) {
  PlanRun r = explain(GetParam(), OutputFormat::Table);
  ASSERT_TRUE(r.status.isOk()) << r.status.message();
  // Every asked pod is answered, and every answer names a plugin or the cycle.
  for (const std::string& pod : GetParam().pods)
    EXPECT_NE(r.out.find("Explain " + pod + " (node "), std::string::npos) << pod << "\n" << r.out;
  kdesched::testing::expectMatchesGolden(
      r.out, kSourceDir / "test/testdata/explain" / (std::string(GetParam().name) + ".table.golden"));
}

TEST_P(ExplainGolden, Json) {
  PlanRun r = explain(GetParam(), OutputFormat::Json);
  ASSERT_TRUE(r.status.isOk()) << r.status.message();
  EXPECT_NE(r.out.find("\"explain\": ["), std::string::npos) << r.out;
  kdesched::testing::expectMatchesGolden(
      r.out, kSourceDir / "test/testdata/explain" / (std::string(GetParam().name) + ".json.golden"));
}

INSTANTIATE_TEST_SUITE_P(Plugins, ExplainGolden, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// A pod name nobody has: the plan is still written whole, the pod is said to be missing, and the
// plan fails so that a script notices (the command exits 2).
TEST(Explain, MissingPodIsSaidAndFails) {
  Case c{"missing", "examples/mixed/snapshot.json", "policies/anti-affinity.yaml", {"shop/nope", "shop/cart-0"}};
  PlanRun r = explain(c, OutputFormat::Table);
  EXPECT_FALSE(r.status.isOk());
  EXPECT_NE(r.status.message().find("no pod shop/nope"), std::string::npos) << r.status.message();
  EXPECT_NE(r.out.find("Explain shop/nope: no such pod"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Explain shop/cart-0 (node node2)"), std::string::npos) << r.out;
}

TEST(Explain, MalformedNameIsBadInput) {
  Case c{"bad", "examples/mixed/snapshot.json", "policies/anti-affinity.yaml", {"cart-0"}};
  PlanRun r = explain(c, OutputFormat::Table);
  EXPECT_FALSE(r.status.isOk());
  EXPECT_NE(r.status.message().find("want namespace/name"), std::string::npos) << r.status.message();
  EXPECT_EQ(r.out, "");
}

// Without --explain the plan is what it always was: no explain section in either format.
TEST(Explain, OffLeavesThePlanAlone) {
  Case c{"off", "examples/mixed/snapshot.json", "policies/anti-affinity.yaml", {}};
  EXPECT_EQ(explain(c, OutputFormat::Table).out.find("Explain"), std::string::npos);
  EXPECT_EQ(explain(c, OutputFormat::Json).out.find("\"explain\""), std::string::npos);
}

}  // namespace

namespace {

// A pod on a NotReady node: no plugin can see it, and the answer says why, before any plugin.
TEST(Explain, PodOnANodeOutsideTheCycle) {
  const fs::path snap = fs::temp_directory_path() / "kdesched-explain-notready.yaml";
  std::ofstream(snap) << R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node1}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node2}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- apiVersion: v1
  kind: Node
  metadata: {name: node3}
  status:
    allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
    conditions: [{type: Ready, status: "False"}]
- apiVersion: v1
  kind: Pod
  metadata: {name: lost-0, namespace: shop, creationTimestamp: "2026-11-30T09:00:00Z"}
  spec: {nodeName: node3, containers: [{name: c, image: x}]}
  status: {phase: Running}
)";
  Case c{"notready", "", "policies/anti-affinity.yaml", {"shop/lost-0"}};
  kdesched::plan::PlanOptions options;
  options.snapshotPath = snap.string();
  options.policyPath = (kSourceDir / c.policy).string();
  options.now = kdesched::testing::kPlanNow;
  options.explain = c.pods;
  std::ostringstream out;
  kdesched::Status st = kdesched::plan::runPlan(options, out);
  fs::remove(snap);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_NE(out.str().find("-        -       excluded  cycle  no plugin considered it: its node node3 is not among the "
                           "cycle's nodes (NotReady)"),
            std::string::npos)
      << out.str();
}

}  // namespace
