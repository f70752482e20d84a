// The plan `kdesched plan` prints for policies/node-taints.yaml over a cluster where a node was
// dedicated to GPU work after pods landed on it. UPDATE_GOLDEN=1 rewrites plan.golden.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pkg/plan/plan.h"

namespace {

namespace fs = std::filesystem;
const fs::path kSrc = fs::path(KDESCHED_SOURCE_DIR);
const fs::path kDir = kSrc / "test/testdata/removepodsviolatingnodetaints";

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string plan(kdesched::plan::OutputFormat format) {
  kdesched::plan::PlanOptions options;
  options.snapshotPath = (kDir / "snapshot.json").string();
  options.policyPath = (kSrc / "policies/node-taints.yaml").string();
  options.format = format;
  options.now = 1796032800;  // 2026-11-30T10:00:00Z
  std::ostringstream out;
  kdesched::Status st = kdesched::plan::runPlan(options, out);
  EXPECT_TRUE(st.isOk()) << st.message();
  return out.str();
}

TEST(NodeTaintsPlanGolden, ExamplePolicy) {
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
TEST(NodeTaintsPlanGolden, EvictsWhatTheSnapshotSays) {
  std::string out = plan(kdesched::plan::OutputFormat::Json);
  for (const char* pod : {"web-5d8b-2", "cart-77aa-1", "infer-9f00-1"})
    EXPECT_NE(out.find(std::string("\"name\": \"") + pod + "\""), std::string::npos) << pod << "\n" << out;
  EXPECT_NE(out.find("\"evictions\": 3"), std::string::npos) << out;
  for (const char* pod : {"web-5d8b-1", "train-3c1e-1", "train-3c1e-2", "web-5d8b-3", "kube-proxy"})
    EXPECT_EQ(out.find(pod), std::string::npos) << pod << "\n" << out;
}

}  // namespace
