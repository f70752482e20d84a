// The plan `kdesched plan` prints for policies/high-node-utilization.yaml over a cluster with two
// lightly used nodes (test/testdata/highnodeutilization/gen_snapshot.py). UPDATE_GOLDEN=1 rewrites
// plan.golden.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pkg/plan/plan.h"

namespace {

namespace fs = std::filesystem;
const fs::path kSrc = fs::path(KDESCHED_SOURCE_DIR);
const fs::path kDir = kSrc / "test/testdata/highnodeutilization";

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string plan(kdesched::plan::OutputFormat format) {
  kdesched::plan::PlanOptions options;
  options.snapshotPath = (kDir / "snapshot.json").string();
  options.policyPath = (kSrc / "policies/high-node-utilization.yaml").string();
  options.format = format;
  options.now = 1796032800;  // 2026-11-30T10:00:00Z
  std::ostringstream out;
  kdesched::Status st = kdesched::plan::runPlan(options, out);
  EXPECT_TRUE(st.isOk()) << st.message();
  return out.str();
}

TEST(HighNodeUtilizationPlanGolden, ExamplePolicy) {
  std::string actual = plan(kdesched::plan::OutputFormat::Table);
  fs::path golden = kDir / "plan.golden";
  if (std::getenv("UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing: run with UPDATE_GOLDEN=1 and review the diff";
  EXPECT_EQ(actual, readFile(golden)) << "plan output differs from " << golden;
}

// The facts gen_snapshot.py states, so a golden rewritten by mistake cannot drift from them.
TEST(HighNodeUtilizationPlanGolden, EmptiesWhatTheSnapshotSays) {
  std::string out = plan(kdesched::plan::OutputFormat::Json);
  std::size_t first = out.find("\"name\": \"worker-6c4d-2\"");
  std::size_t second = out.find("\"name\": \"worker-6c4d-1\"");
  std::size_t third = out.find("\"name\": \"web-5d8b-1\"");
  ASSERT_NE(third, std::string::npos) << out;
  EXPECT_LT(first, second) << "node4, the least used, is emptied first\n" << out;
  EXPECT_LT(second, third) << "lowest priority first\n" << out;
  EXPECT_NE(out.find("\"evictions\": 3"), std::string::npos) << out;
  for (const char* pod : {"log-agent", "api-7f9c", "db-0"})
    EXPECT_EQ(out.find(pod), std::string::npos) << pod << "\n" << out;
}

}  // namespace
