#include "cmd/kdesched/snapshot_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test/unit/kube/support.h"

namespace kdesched::cmd {
namespace {

using kube::testing::TempDir;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SnapshotFileTest, TheDestinationChangesOnlyAtCommitAndIsOwnerOnly) {
  TempDir dir;
  const std::string path = dir.write("snap.json", "the previous snapshot");
  auto f = SnapshotFile::create(path, {}, 42);
  ASSERT_TRUE(f.isOk()) << f.error();
  EXPECT_EQ(f->temporaryPath(), path + ".tmp-42");
  f->stream() << "{\"kind\":\"List\"}";
  EXPECT_EQ(contents(path), "the previous snapshot") << "not truncated before the plan has read anything";
  ASSERT_TRUE(f->commit().isOk());
  EXPECT_EQ(contents(path), "{\"kind\":\"List\"}");
  EXPECT_FALSE(fs::exists(path + ".tmp-42"));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "pod specs may carry secrets";
}

TEST(SnapshotFileTest, AnAbandonedFileLeavesTheDestinationAsItWas) {
  TempDir dir;
  const std::string path = dir.write("snap.json", "the previous snapshot");
  {
    auto f = SnapshotFile::create(path, {}, 7);
    ASSERT_TRUE(f.isOk()) << f.error();
    f->stream() << "half a snap";
  }  // the run failed: never committed
  EXPECT_EQ(contents(path), "the previous snapshot");
  EXPECT_FALSE(fs::exists(path + ".tmp-7"));

  const std::string fresh = dir.file("new.json");
  {
    auto f = SnapshotFile::create(fresh, {}, 7);
    ASSERT_TRUE(f.isOk()) << f.error();
    f->abandon();
  }
  EXPECT_FALSE(fs::exists(fresh)) << "no empty file left behind";
}

TEST(SnapshotFileTest, AFileTheRunReadsIsRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  const std::string policy = dir.write("policy.yaml", "apiVersion: descheduler/v1alpha2\n");
  const std::string kubeconfig = dir.write("kubeconfig", "apiVersion: v1\n");
  fs::create_symlink(policy, dir.file("alias.yaml"));
  for (const std::string& same : {policy, dir.path().string() + "/./policy.yaml", dir.file("alias.yaml")}) {
    auto f = SnapshotFile::create(same, {"", kubeconfig, policy}, 1);
    ASSERT_FALSE(f.isOk()) << same;
    EXPECT_THAT(f.error(), HasSubstr("is a file this run reads (" + policy + ")"));
  }
  auto k = SnapshotFile::create(kubeconfig, {policy, kubeconfig}, 1);
  ASSERT_FALSE(k.isOk());
  EXPECT_THAT(k.error(), HasSubstr("saving would overwrite it"));
  EXPECT_EQ(contents(policy), "apiVersion: descheduler/v1alpha2\n");
  EXPECT_EQ(contents(kubeconfig), "apiVersion: v1\n");
  EXPECT_FALSE(fs::exists(policy + ".tmp-1"));
  EXPECT_TRUE(SnapshotFile::create(dir.file("other.json"), {policy, kubeconfig}, 1).isOk());
}

TEST(SnapshotFileTest, ADirectoryOrAnUnwritablePlaceIsAClearError) {
  TempDir dir;
  auto d = SnapshotFile::create(dir.path().string(), {}, 1);
  ASSERT_FALSE(d.isOk());
  EXPECT_THAT(d.error(), HasSubstr("is a directory"));
  auto missing = SnapshotFile::create(dir.file("no/such/dir/snap.json"), {}, 1);
  ASSERT_FALSE(missing.isOk());
  EXPECT_THAT(missing.error(), HasSubstr("cannot write " + dir.file("no/such/dir/snap.json") + ".tmp-1"));
  EXPECT_THAT(missing.error(), HasSubstr("No such file or directory"));
}

}  // namespace
}  // namespace kdesched::cmd
