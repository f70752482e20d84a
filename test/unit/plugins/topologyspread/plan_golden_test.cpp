// The worked example of docs/strategies/topology-spread.md, through `kdesched plan`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pkg/plan/plan.h"
#include "test/unit/plugins/plan_golden.h"

namespace kdesched::testing {
namespace {

namespace fs = std::filesystem;

TEST(TopologySpreadPlan, Golden) {
  const fs::path dir = kSourceDir / "test/testdata/topologyspread";
  expectMatchesGolden(planOf(dir / "snapshot.json", dir / "policy.yaml", plan::OutputFormat::Table),
                      dir / "plan.golden");
}

}  // namespace
}  // namespace kdesched::testing
