// Runs the real kdesched binary (KDESCHED_BINARY) for the plan tests: exit code, stdout, stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kdesched::testing {

inline const std::filesystem::path kSrc = KDESCHED_SOURCE_DIR;

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
  std::string cmd = prefix + " " + std::string(KDESCHED_BINARY) + " " + args + " 2>" + errFile.string();
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

}  // namespace kdesched::testing
