// Every example under policies/ builds into an engine: the policy loads and every plugin it
// configures accepts its args. The policy layer's own test (policy_robustness_test) only parses the
// files, and cannot see a misspelled or out-of-range plugin arg.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "pkg/engine/engine.h"
#include "test/unit/testing/paths.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> examplePolicies() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(kdesched::testing::sourceDir()) / "policies")) {
    if (entry.path().extension() == ".yaml" || entry.path().extension() == ".yml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ExamplePolicies, EveryFileBuildsEveryPlugin) {
  const std::vector<fs::path> files = examplePolicies();
  // One per strategy (DefaultEvictor is in all of them) and default.yaml; a directory listing that
  // finds nothing must not pass.
  ASSERT_GE(files.size(), 11u);
  kdesched::framework::BuildContext ctx;
  ctx.now = kdesched::framework::WallSeconds::pinned(1796032800);
  ctx.priorityClassValue = [](const std::string& name) -> kdesched::Result<std::int32_t> {
    return kdesched::Status::error("PriorityClass \"" + name + "\" is not in this test");
  };
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    auto engine = kdesched::engine::buildEngine(file.string(), ctx);
    ASSERT_TRUE(engine.isOk()) << engine.error();
    EXPECT_FALSE(engine->profiles.empty());
  }
}

}  // namespace
