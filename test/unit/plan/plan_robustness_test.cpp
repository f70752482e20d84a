// `kdesched plan` on inputs that could crash or hang it: each exits with a clear message, or stops
// when told to.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test/unit/plan/cli.h"

namespace kdesched::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kPolicy = (kSrc / "examples/order-payment/policy.yaml").string();
const std::string kSnapshot = (kSrc / "examples/order-payment/snapshot.json").string();

class TempDir : public ::testing::Test {
 protected:
  fs::path dir_ = fs::temp_directory_path() / ("kdesched-plan-robust-" + std::to_string(::getpid()) + "-" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
};

// Read without a bound, /dev/zero took 2 GiB in 7 s and then the OOM killer; read up to the 1 GiB
// limit, seconds and a gigabyte. Its first byte already says it is not a snapshot.
TEST(PlanRobustness, ABinarySnapshotIsRefusedAtItsFirstByte) {
  CmdResult r = run("plan --snapshot /dev/zero --policy-config-file " + kPolicy);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("/dev/zero: binary data (a NUL byte at line 1, column 1): expected the JSON or YAML"));
}

// An endless text stream still stops at --max-snapshot-bytes.
TEST(PlanRobustness, AnEndlessSnapshotIsRefusedAtTheSizeLimit) {
  CmdResult r = run("plan --snapshot /dev/stdin --max-snapshot-bytes 1000000 --policy-config-file " + kPolicy,
                    "yes | timeout 60");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("larger than 1000000 bytes; raise --max-snapshot-bytes"));
}

TEST_F(TempDir, ADirectoryOrAMissingFileIsNamedAsSuch) {
  CmdResult dir = run("plan --snapshot " + dir_.string() + " --policy-config-file " + kPolicy);
  EXPECT_EQ(dir.exitCode, 2);
  EXPECT_THAT(dir.err, HasSubstr(dir_.string() + ": is a directory"));
  CmdResult missing = run("plan --snapshot " + (dir_ / "nope.json").string() + " --policy-config-file " + kPolicy);
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_THAT(missing.err, HasSubstr("cannot open the snapshot file: No such file or directory"));
}

// nlohmann refused to print a profile name with invalid UTF-8 (type_error 316) and the process
// aborted as soon as one eviction row was written.
TEST_F(TempDir, AProfileNameWithInvalidUtf8PrintsAsJson) {
  std::string policy = readFile(kPolicy);
  const auto at = policy.find("- name: ");
  ASSERT_NE(at, std::string::npos);
  policy.replace(at, 8,
                 "- name: bad\xFF"
                 "name\n  # was: ");
  std::ofstream(dir_ / "policy.yaml", std::ios::binary) << policy;
  CmdResult r =
      run("plan -o json --snapshot " + kSnapshot + " --policy-config-file " + (dir_ / "policy.yaml").string());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("bad\xEF\xBF\xBDname"));  // U+FFFD in place of the bad byte
}

// main() blocks SIGINT/SIGTERM for the daemon's signal thread, which plan never starts: plan must
// die of SIGTERM like any command. Its snapshot here is a FIFO nobody writes, so it waits forever.
TEST_F(TempDir, PlanStopsOnSigterm) {
  const fs::path fifo = dir_ / "snapshot.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // timeout sends TERM after 1 s and KILL 5 s later: 124 means TERM worked, 137 that it was ignored.
  CmdResult r = run("plan --snapshot " + fifo.string() + " --policy-config-file " + kPolicy,
                    "exec 3<>" + fifo.string() + "; timeout -k 5 1");
  EXPECT_EQ(r.exitCode, 124) << "137: SIGTERM was ignored and only SIGKILL stopped it";
}

// A pod without metadata.name was accepted and planned for eviction as "default/".
TEST_F(TempDir, AnObjectWithoutANameIsAnError) {
  std::ofstream(dir_ / "s.json") << R"({"kind":"List","items":[
    {"kind":"Node","metadata":{"name":"n1"}},
    {"kind":"Pod","metadata":{"namespace":"default"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}}]})";
  CmdResult r = run("plan --snapshot " + (dir_ / "s.json").string() + " --policy-config-file " + kPolicy);
  EXPECT_EQ(r.exitCode, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("document.items[1] (Pod): metadata.name: missing"));
}

// A -3 cpu request showed as "cpu -75%"; a negative allocatable silently emptied the plan.
TEST_F(TempDir, NegativeQuantitiesAreErrorsNamingTheObject) {
  std::ofstream(dir_ / "req.json") << R"({"kind":"List","items":[
    {"kind":"Pod","metadata":{"name":"p","namespace":"d"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"-3"}}}]}}]})";
  std::ofstream(dir_ / "alloc.json") << R"({"kind":"List","items":[
    {"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"-4Gi"}}}]})";
  CmdResult req = run("plan --snapshot " + (dir_ / "req.json").string() + " --policy-config-file " + kPolicy);
  EXPECT_EQ(req.exitCode, 2);
  EXPECT_THAT(req.err, HasSubstr("(Pod d/p)"));
  EXPECT_THAT(req.err, HasSubstr("negative quantity for cpu"));
  CmdResult alloc = run("plan --snapshot " + (dir_ / "alloc.json").string() + " --policy-config-file " + kPolicy);
  EXPECT_EQ(alloc.exitCode, 2);
  EXPECT_THAT(alloc.err, HasSubstr("(Node n1)"));
  EXPECT_THAT(alloc.err, HasSubstr("negative quantity for memory"));
}

}  // namespace
}  // namespace kdesched::testing
