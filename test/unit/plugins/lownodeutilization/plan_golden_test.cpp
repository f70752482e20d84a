// The plan `kdesched plan` prints for the LowNodeUtilization worked example (the scenario of
// docs/strategies/low-node-utilization.md), built in-process. UPDATE_GOLDEN=1 rewrites plan.golden.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pkg/plan/plan.h"

namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(KDESCHED_SOURCE_DIR) / "test/testdata/lownodeutilization";

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string plan(kdesched::plan::OutputFormat format) {
  kdesched::plan::PlanOptions options;
  options.snapshotPath = (kDir / "snapshot.json").string();
  options.policyPath = (kDir / "policy.yaml").string();
  options.format = format;
  options.now = 1796032800;  // 2026-11-30T10:00:00Z, two hours after the pods started
  std::ostringstream out;
  kdesched::Status st = kdesched::plan::runPlan(options, out);
  EXPECT_TRUE(st.isOk()) << st.message();
  return out.str();
}

TEST(LowNodeUtilizationPlanGolden, WorkedExample) {
  std::string actual = plan(kdesched::plan::OutputFormat::Table);
  fs::path golden = kDir / "plan.golden";
  if (std::getenv("UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing: run with UPDATE_GOLDEN=1 and review the diff";
  EXPECT_EQ(actual, readFile(golden)) << "plan output differs from " << golden;
}

// The facts the documentation states, so a golden rewritten by mistake cannot drift from it.
TEST(LowNodeUtilizationPlanGolden, MovesWhatTheDocsSay) {
  std::string out = plan(kdesched::plan::OutputFormat::Json);
  for (const char* pod : {"analytics-9e2f-1", "analytics-9e2f-2", "worker-6c4d-1", "worker-6c4d-2"})
    EXPECT_NE(out.find(std::string("\"name\": \"") + pod + "\""), std::string::npos) << pod << "\n" << out;
  EXPECT_NE(out.find("\"evictions\": 4"), std::string::npos) << out;
  EXPECT_NE(out.find("\"refused\": 0"), std::string::npos) << out;
  EXPECT_EQ(out.find("api-7f9c"), std::string::npos) << out;
  EXPECT_EQ(out.find("cache-0"), std::string::npos) << out;
}

}  // namespace
