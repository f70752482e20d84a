// The plan golden tests of the plugins: one cycle of `kdesched plan` in-process on a worked example
// (test/testdata/<plugin>/), compared with its plan.golden. UPDATE_GOLDEN=1 rewrites the golden.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pkg/plan/plan.h"
#include "test/unit/testing/paths.h"

namespace kdesched::testing {

inline const std::filesystem::path kSourceDir = kdesched::testing::sourceDir();
// 2026-11-30T10:00:00Z: every worked example's pods are dated against this instant.
inline constexpr api::Timestamp kPlanNow = 1796032800;

inline std::string planOf(const std::filesystem::path& snapshot, const std::filesystem::path& policy,
                          plan::OutputFormat format, api::Timestamp now = kPlanNow) {
  plan::PlanOptions options;
  options.snapshotPath = snapshot.string();
  options.policyPath = policy.string();
  options.format = format;
  options.now = now;
  std::ostringstream out;
  Status st = plan::runPlan(options, out);
  EXPECT_TRUE(st.isOk()) << st.message();
  return out.str();
}

inline void expectMatchesGolden(const std::string& actual, const std::filesystem::path& golden) {
  if (std::getenv("UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden << " missing: run with UPDATE_GOLDEN=1 and review the diff";
  std::ifstream in(golden, std::ios::binary);
  std::ostringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "plan output differs from " << golden;
}

}  // namespace kdesched::testing
