// The plan `kdesched plan` prints for test/testdata/removepodshavingtoomanyrestarts: crash-looping pods with 10
// restarts or more, most restarts first on each node; a running pod, a pod below the threshold and a DaemonSet pod
// stay. UPDATE_GOLDEN=1 rewrites plan.golden.
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
const fs::path kDir = fs::path(kdesched::testing::sourceDir()) / "test/testdata/removepodshavingtoomanyrestarts";

std::string plan(kdesched::plan::OutputFormat format, fs::path policy = kDir / "policy.yaml") {
  return kdesched::testing::planOf((kDir / "snapshot.yaml"), policy, format);
}

TEST(RemovePodsHavingTooManyRestartsPlanGolden, Snapshot) {
  std::string actual = plan(kdesched::plan::OutputFormat::Table);
  kdesched::testing::expectMatchesGolden(actual, kDir / "plan.golden");
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
  std::string out = plan(kdesched::plan::OutputFormat::Json,
                         fs::path(kdesched::testing::sourceDir()) / "policies/too-many-restarts.yaml");
  EXPECT_NE(out.find("\"evictions\": 3"), std::string::npos) << out;
}

}  // namespace
