// Runs the real kdesched binary (kdeschedBinary()) for the plan tests: exit code, stdout, stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "test/unit/testing/paths.h"

namespace kdesched::testing {

inline const std::filesystem::path kSrc = kdesched::testing::sourceDir();

struct CmdResult {
  int exitCode = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

inline std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `args` go through the shell; `prefix` runs before the binary (e.g. a `timeout` of the test's own).
inline CmdResult run(const std::string& args, const std::string& prefix = "timeout 60") {
  std::filesystem::path errFile =
      std::filesystem::temp_directory_path() / ("kdesched-plan-test-" + std::to_string(::getpid()) + ".err");
  std::string cmd =
      prefix + " " + std::string(kdesched::testing::kdeschedBinary()) + " " + args + " 2>" + errFile.string();
  CmdResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = readFile(errFile);
  std::filesystem::remove(errFile);
  return r;
}

// Compares `actual` with test/testdata/GOLDEN_NAME; UPDATE_GOLDEN=1 in the environment rewrites it.
inline void expectGolden(const std::string& actual, const std::string& goldenName) {
  std::filesystem::path golden = kSrc / "test/testdata" / goldenName;
  if (std::getenv("UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden << " missing: run with UPDATE_GOLDEN=1 and review the diff";
  EXPECT_EQ(actual, readFile(golden)) << "plan output differs from " << golden;
}

// The arguments that plan examples/DIR/SNAPSHOT with examples/DIR/policy.yaml at NOW.
inline std::string example(const std::string& dir, const std::string& snapshot = "snapshot.json",
                           const std::string& now = "2026-11-30T10:00:00Z") {
  return "plan --snapshot " + (kSrc / "examples" / dir / snapshot).string() + " --policy-config-file " +
         (kSrc / "examples" / dir / "policy.yaml").string() + " --now " + now;
}

}  // namespace kdesched::testing
