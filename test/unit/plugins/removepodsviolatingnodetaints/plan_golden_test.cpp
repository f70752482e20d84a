// The plan `kdesched plan` prints for policies/node-taints.yaml over a cluster where a node was
// dedicated to GPU work after pods landed on it. UPDATE_GOLDEN=1 rewrites plan.golden.
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
const fs::path kDir = kSrc / "test/testdata/removepodsviolatingnodetaints";

std::string plan(kdesched::plan::OutputFormat format) {
  return kdesched::testing::planOf((kDir / "snapshot.json"), (kSrc / "policies/node-taints.yaml"), format);
}

TEST(NodeTaintsPlanGolden, ExamplePolicy) {
  std::string actual = plan(kdesched::plan::OutputFormat::Table);
  kdesched::testing::expectMatchesGolden(actual, kDir / "plan.golden");
}

// The facts gen_snapshot.py states, so a golden rewritten by mistake cannot drift from them.
TEST(NodeTaintsPlanGolden, EvictsWhatTheSnapshotSays) {
  std::string out = plan(kdesched::plan::OutputFormat::Json);
  for (const char* pod : {"web-5d8b-2", "cart-77aa-1", "infer-9f00-1"})
    EXPECT_NE(out.find(std::string("\"name\": \"") + pod + "\""), std::string::npos) << pod << "\n" << out;
  EXPECT_NE(out.find("\"evictions\": 3"), std::string::npos) << out;
  for (const char* pod : {"web-5d8b-1", "train-3c1e-1", "train-3c1e-2", "web-5d8b-3", "kube-proxy"})
    EXPECT_EQ(out.find(pod), std::string::npos) << pod << "\n" << out;
}

}  // namespace
