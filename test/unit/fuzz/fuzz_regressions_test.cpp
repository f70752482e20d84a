// Replays every input the fuzzers once crashed on (test/fuzz/regressions/<target>/) and the
// committed seeds (test/fuzz/seeds/<target>/) through the fuzz targets' own entry points, in the
// ordinary g++ build: a fix stays checked on machines without clang, one test per file so a crash
// names its input. A broken invariant aborts, as it does under libFuzzer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "test/fuzz/entry_points.h"
#include "test/unit/testing/paths.h"

namespace kdesched::fuzz {
namespace {

namespace fs = std::filesystem;

struct Input {
  std::string target;
  fs::path path;
};

// ctest lists each case with its parameter: the file, not a byte dump.
void PrintTo(const Input& input, std::ostream* os) { *os << input.path.string(); }

std::vector<Input> collect(const char* kind) {
  std::vector<Input> out;
  const fs::path root = fs::path(kdesched::testing::sourceDir()) / "test/fuzz" / kind;
  if (!fs::is_directory(root)) return out;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    for (const auto& file : fs::directory_iterator(dir.path())) {
      if (file.is_regular_file()) out.push_back({dir.path().filename().string(), file.path()});
    }
  }
  std::sort(out.begin(), out.end(), [](const Input& a, const Input& b) { return a.path < b.path; });
  return out;
}

std::string testName(const ::testing::TestParamInfo<Input>& info) {
  std::string name = info.param.target + "_" + info.param.path.filename().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name + "_" + std::to_string(info.index);
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

class FuzzInput : public ::testing::TestWithParam<Input> {};

TEST_P(FuzzInput, ReturnsWithoutCrashing) {
  const Target* target = findTarget(GetParam().target);
  ASSERT_NE(target, nullptr) << GetParam().path << ": the folder names no fuzz target (entry_points.cpp)";
  const std::string input = readFile(GetParam().path);
  target->run(input);
}

INSTANTIATE_TEST_SUITE_P(Regressions, FuzzInput, ::testing::ValuesIn(collect("regressions")), testName);
INSTANTIATE_TEST_SUITE_P(Seeds, FuzzInput, ::testing::ValuesIn(collect("seeds")), testName);

TEST(FuzzTargets, EveryTargetHasSeeds) {
  for (const auto& t : targets()) {
    const fs::path dir = fs::path(kdesched::testing::sourceDir()) / "test/fuzz/seeds" / std::string(t.name);
    EXPECT_TRUE(fs::is_directory(dir) && !fs::is_empty(dir)) << dir << ": no committed seed for " << t.name;
  }
}

}  // namespace
}  // namespace kdesched::fuzz
