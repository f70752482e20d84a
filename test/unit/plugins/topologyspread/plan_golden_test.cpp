// The worked example of docs/strategies/topology-spread.md, through `kdesched plan`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pkg/plan/plan.h"

namespace kdesched::testing {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TopologySpreadPlan, Golden) {
  const fs::path dir = fs::path(KDESCHED_SOURCE_DIR) / "test/testdata/topologyspread";
  plan::PlanOptions options;
  options.snapshotPath = (dir / "snapshot.json").string();
  options.policyPath = (dir / "policy.yaml").string();
  options.now = 1796032800;  // 2026-11-30T10:00:00Z
  std::ostringstream out;
  Status st = plan::runPlan(options, out);
  ASSERT_TRUE(st.isOk()) << st.message();
  const fs::path golden = dir / "plan.golden";
  if (std::getenv("UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << out.str();
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing: run with UPDATE_GOLDEN=1 and review the diff";
  EXPECT_EQ(out.str(), readFile(golden)) << "plan output differs from " << golden;
}

}  // namespace
}  // namespace kdesched::testing
