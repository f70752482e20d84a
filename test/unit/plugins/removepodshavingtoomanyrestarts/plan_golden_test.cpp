// The plan `kdesched plan` prints for test/testdata/removepodshavingtoomanyrestarts: crash-looping pods with 10
// restarts or more, most restarts first on each node; a running pod, a pod below the threshold and a DaemonSet pod
// stay. UPDATE_GOLDEN=1 rewrites plan.golden.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pkg/plan/plan.h"

namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(KDESCHED_SOURCE_DIR) / "test/testdata/removepodshavingtoomanyrestarts";

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string plan(kdesched::plan::OutputFormat format, fs::path policy = kDir / "policy.yaml") {
  kdesched::plan::PlanOptions options;
  options.snapshotPath = (kDir / "snapshot.yaml").string();
  options.policyPath = policy.string();
  options.format = format;
  options.now = 1796032800;  // 2026-11-30T10:00:00Z
  std::ostringstream out;
  kdesched::Status st = kdesched::plan::runPlan(options, out);
  EXPECT_TRUE(st.isOk()) << st.message();
  return out.str();
}

TEST(RemovePodsHavingTooManyRestartsPlanGolden, Snapshot) {
  std::string actual = plan(kdesched::plan::OutputFormat::Table);
  fs::path golden = kDir / "plan.golden";
  if (std::getenv("UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing: run with UPDATE_GOLDEN=1 and review the diff";
  EXPECT_EQ(actual, readFile(golden)) << "plan output differs from " << golden;
}

// The facts the snapshot was built to show, so a golden rewritten by mistake cannot drift from them.
TEST(RemovePodsHavingTooManyRestartsPlanGolden, EvictsWhatTheSnapshotShows) {
  std::string out = plan(kdesched::plan::OutputFormat::Json);
  for (const char* pod : {"api-6f7d8c9b5-d3e4f", "api-6f7d8c9b5-a1b2c", "api-6f7d8c9b5-j7k8l"})
    EXPECT_NE(out.find(std::string("\"name\": \"") + pod + "\""), std::string::npos) << pod << "\n" << out;
  EXPECT_NE(out.find("\"evictions\": 3"), std::string::npos) << out;
  for (const char* pod : {"worker-5b6c7d8e9-g5h6i", "cache-0", "node-agent-p9q8r"})
    EXPECT_EQ(out.find(pod), std::string::npos) << pod << "\n" << out;
}

// The example policy in policies/ does what its comments say on the same cluster.
TEST(RemovePodsHavingTooManyRestartsPlanGolden, ExamplePolicy) {
  std::string out =
      plan(kdesched::plan::OutputFormat::Json, fs::path(KDESCHED_SOURCE_DIR) / "policies/too-many-restarts.yaml");
  EXPECT_NE(out.find("\"evictions\": 3"), std::string::npos) << out;
}

}  // namespace
