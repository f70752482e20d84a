// The plan `kdesched plan` prints for test/testdata/removefailedpods: failed pods older than an hour with a listed
// reason; StatefulSet pods, young pods, unlisted reasons and bare pods stay. UPDATE_GOLDEN=1 rewrites plan.golden.
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
const fs::path kDir = fs::path(kdesched::testing::sourceDir()) / "test/testdata/removefailedpods";

std::string plan(kdesched::plan::OutputFormat format, fs::path policy = kDir / "policy.yaml") {
  return kdesched::testing::planOf((kDir / "snapshot.yaml"), policy, format);
}

TEST(RemoveFailedPodsPlanGolden, Snapshot) {
  std::string actual = plan(kdesched::plan::OutputFormat::Table);
  kdesched::testing::expectMatchesGolden(actual, kDir / "plan.golden");
}

// The facts the snapshot was built to show, so a golden rewritten by mistake cannot drift from them.
TEST(RemoveFailedPodsPlanGolden, EvictsWhatTheSnapshotShows) {
  std::string out = plan(kdesched::plan::OutputFormat::Json);
  for (const char* pod : {"import-28473-x7k2p", "web-7d9f8b6c5d-x2k4p", "orders-5c8b9d7f6-m4n8p"})
    EXPECT_NE(out.find(std::string("\"name\": \"") + pod + "\""), std::string::npos) << pod << "\n" << out;
  EXPECT_NE(out.find("\"evictions\": 3"), std::string::npos) << out;
  for (const char* pod : {"import-28474-q9w3z", "db-0", "debug", "report-28470-h5j6k", "web-7d9f8b6c5d-r8t2m"})
    EXPECT_EQ(out.find(pod), std::string::npos) << pod << "\n" << out;
}

// The example policy in policies/ does what its comments say on the same cluster.
TEST(RemoveFailedPodsPlanGolden, ExamplePolicy) {
  std::string out = plan(kdesched::plan::OutputFormat::Json,
                         fs::path(kdesched::testing::sourceDir()) / "policies/remove-failed-pods.yaml");
  EXPECT_NE(out.find("\"evictions\": 3"), std::string::npos) << out;
}

}  // namespace
