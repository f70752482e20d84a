// The plan `kdesched plan` prints for policies/high-node-utilization.yaml over a cluster with two
// lightly used nodes (test/testdata/highnodeutilization/gen_snapshot.py). UPDATE_GOLDEN=1 rewrites
// plan.golden.
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
const fs::path kSrc = fs::path(kdesched::testing::sourceDir());
const fs::path kDir = kSrc / "test/testdata/highnodeutilization";

std::string plan(kdesched::plan::OutputFormat format) {
  return kdesched::testing::planOf((kDir / "snapshot.json"), (kSrc / "policies/high-node-utilization.yaml"), format);
}

TEST(HighNodeUtilizationPlanGolden, ExamplePolicy) {
  std::string actual = plan(kdesched::plan::OutputFormat::Table);
  kdesched::testing::expectMatchesGolden(actual, kDir / "plan.golden");
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
