// The plan `kdesched plan` prints for the LowNodeUtilization worked example (the scenario of
// docs/strategies/low-node-utilization.md), built in-process. UPDATE_GOLDEN=1 rewrites plan.golden.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pkg/plan/plan.h"
#include "test/unit/plugins/plan_golden.h"
#include "test/unit/testing/paths.h"

namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(kdesched::testing::sourceDir()) / "test/testdata/lownodeutilization";

std::string plan(kdesched::plan::OutputFormat format) {
  return kdesched::testing::planOf((kDir / "snapshot.json"), (kDir / "policy.yaml"), format);
}

TEST(LowNodeUtilizationPlanGolden, WorkedExample) {
  std::string actual = plan(kdesched::plan::OutputFormat::Table);
  kdesched::testing::expectMatchesGolden(actual, kDir / "plan.golden");
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
