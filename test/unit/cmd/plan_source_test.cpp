#include "cmd/kdesched/plan_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kdesched::cmd {
namespace {

using ::testing::HasSubstr;
using Kind = PlanSource::Kind;

// The flags by name (designated initializers would have to name every field).
struct F : PlanSourceFlags {
  F& snapshot(std::string v) {
    PlanSourceFlags::snapshot = std::move(v);
    return *this;
  }
  F& kubeconfig(std::string v) {
    PlanSourceFlags::kubeconfig = std::move(v);
    return *this;
  }
  F& clientKubeconfig(std::string v) {
    PlanSourceFlags::clientKubeconfig = std::move(v);
    return *this;
  }
  F& saveSnapshot(std::string v) {
    PlanSourceFlags::saveSnapshot = std::move(v);
    return *this;
  }
  F& liveOnly(std::vector<std::string> v) {
    PlanSourceFlags::liveOnly = std::move(v);
    return *this;
  }
  F& snapshotOnly(std::vector<std::string> v) {
    PlanSourceFlags::snapshotOnly = std::move(v);
    return *this;
  }
};

Result<PlanSource> choose(const PlanSourceFlags& f, const char* serviceHost = nullptr,
                          const char* kubeconfigEnv = nullptr) {
  return choosePlanSource(f, serviceHost, kubeconfigEnv);
}

std::string errorOf(const PlanSourceFlags& f, const char* serviceHost = nullptr, const char* kubeconfigEnv = nullptr) {
  auto r = choose(f, serviceHost, kubeconfigEnv);
  EXPECT_FALSE(r.isOk());
  return r.isOk() ? "" : r.error();
}

TEST(PlanSource, EachSourceAlone) {
  auto snapshot = choose(F().snapshot("s.json"));
  ASSERT_TRUE(snapshot.isOk()) << snapshot.error();
  EXPECT_EQ(snapshot->kind, Kind::Snapshot);
  EXPECT_EQ(snapshot->path, "s.json");

  auto kubeconfig = choose(F().kubeconfig("kc"));
  ASSERT_TRUE(kubeconfig.isOk()) << kubeconfig.error();
  EXPECT_EQ(kubeconfig->kind, Kind::Kubeconfig);
  EXPECT_EQ(kubeconfig->path, "kc");

  // Upstream's spelling, alone or with the same file under both names.
  for (const PlanSourceFlags& f :
       std::vector<PlanSourceFlags>{F().clientKubeconfig("kc"), F().kubeconfig("kc").clientKubeconfig("kc")}) {
    auto r = choose(f);
    ASSERT_TRUE(r.isOk()) << r.error();
    EXPECT_EQ(r->kind, Kind::Kubeconfig);
    EXPECT_EQ(r->path, "kc");
  }

  auto inCluster = choose(F(), "10.96.0.1");
  ASSERT_TRUE(inCluster.isOk()) << inCluster.error();
  EXPECT_EQ(inCluster->kind, Kind::InCluster);
  // A flag wins over the pod's own config.
  EXPECT_EQ(choose(F().snapshot("s.json"), "10.96.0.1")->kind, Kind::Snapshot);
  EXPECT_EQ(choose(F().kubeconfig("kc"), "10.96.0.1")->kind, Kind::Kubeconfig);
}

TEST(PlanSource, NoSourceSaysWhatToGiveAndNeverReadsKubeconfigFromTheEnvironment) {
  EXPECT_THAT(errorOf(F()), HasSubstr("no cluster state to plan on: give --snapshot FILE"));
  EXPECT_THAT(errorOf(F(), ""), HasSubstr("no cluster state to plan on"));  // set but empty: not in a pod
  EXPECT_THAT(errorOf(F(), nullptr, "/home/me/.kube/config"),
              HasSubstr("plan does not read $KUBECONFIG by itself: --kubeconfig \"/home/me/.kube/config\""));
}

TEST(PlanSource, TwoSourcesAreRefused) {
  EXPECT_THAT(errorOf(F().snapshot("s.json").kubeconfig("kc")),
              HasSubstr("--snapshot reads a file and --kubeconfig the cluster: give one of them"));
  EXPECT_THAT(errorOf(F().snapshot("s.json").clientKubeconfig("kc")),
              HasSubstr("--snapshot reads a file and --client-connection-kubeconfig the cluster"));
  EXPECT_THAT(errorOf(F().kubeconfig("a").clientKubeconfig("b")),
              HasSubstr("--kubeconfig \"a\" and --client-connection-kubeconfig \"b\" name different files"));
}

TEST(PlanSource, FlagsOfTheOtherSourceAreRefused) {
  EXPECT_THAT(errorOf(F().snapshot("s.json").saveSnapshot("out.json")),
              HasSubstr("--save-snapshot saves what a plan read from the cluster"));
  EXPECT_THAT(errorOf(F().snapshot("s.json").liveOnly({"--client-connection-qps", "--api-request-timeout"})),
              HasSubstr("--client-connection-qps, --api-request-timeout: only for a plan read from the cluster"));
  EXPECT_THAT(errorOf(F().kubeconfig("kc").snapshotOnly({"--max-snapshot-bytes"})),
              HasSubstr("--max-snapshot-bytes: only for --snapshot FILE, not for a plan read from kc"));
  EXPECT_THAT(errorOf(F().snapshotOnly({"--max-snapshot-bytes"}), "10.96.0.1"),
              HasSubstr("not for a plan read from the cluster (in-cluster config)"));
  // What belongs to the source given is fine.
  EXPECT_TRUE(choose(F().kubeconfig("kc").saveSnapshot("out.json").liveOnly({"--client-connection-qps"})).isOk());
  EXPECT_TRUE(choose(F().snapshot("s.json").snapshotOnly({"--max-snapshot-bytes"})).isOk());
}

}  // namespace
}  // namespace kdesched::cmd
