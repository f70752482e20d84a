// The plan `kdesched plan` prints for the PodLifeTime worked example (docs/strategies/pod-lifetime.md), built
// in-process. UPDATE_GOLDEN=1 rewrites plan.golden.
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
const fs::path kDir = fs::path(kdesched::testing::sourceDir()) / "test/testdata/podlifetime";

std::string plan(kdesched::plan::OutputFormat format) {
  return kdesched::testing::planOf((kDir / "snapshot.json"), (kDir / "policy.yaml"), format);
}

TEST(PodLifeTimePlanGolden, WorkedExample) {
  std::string actual = plan(kdesched::plan::OutputFormat::Table);
  kdesched::testing::expectMatchesGolden(actual, kDir / "plan.golden");
}

// The facts the docs page states, so a golden rewritten by mistake cannot drift from them: the
// oldest stuck pod first, the PDB-covered one refused, the healthy, young and kube-system ones kept.
TEST(PodLifeTimePlanGolden, EvictsWhatTheReadmeSays) {
  std::string out = plan(kdesched::plan::OutputFormat::Table);
  auto report = out.find("report-8d2e-1");
  auto api = out.find("api-5f7c-1");
  ASSERT_NE(report, std::string::npos) << out;
  ASSERT_NE(api, std::string::npos) << out;
  EXPECT_LT(report, api) << out;
  EXPECT_NE(out.find("2 evictions, 1 refused"), std::string::npos) << out;
  for (const char* kept : {"api-5f7c-2", "api-5f7c-3", "dns-6b9d-1"})
    EXPECT_EQ(out.find(kept), std::string::npos) << kept << "\n" << out;
}

}  // namespace
