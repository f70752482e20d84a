// kdesched_owner_evictions_total: the workload a pod counts under, and the two bounds on the series
// (idle removal on the injected clock, the cap with its overflow series).
#include "pkg/metrics/owner_evictions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "pkg/metrics/metrics.h"
#include "pkg/metrics/observers.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::metrics {
namespace {

using namespace std::chrono_literals;

// The exposition's kdesched_owner_evictions_total lines, sorted (a family's order is a hash's).
std::string ownerLines(const Metrics& m) {
  std::istringstream in(m.serialize());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("kdesched_owner_evictions_total{", 0) == 0) lines.push_back(line + "\n");
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l;
  return out;
}

std::string series(const std::string& ns, const std::string& kind, const std::string& name, const std::string& reason,
                   int value) {
  return "kdesched_owner_evictions_total{namespace=\"" + ns + "\",owner_kind=\"" + kind + "\",owner_name=\"" + name +
         "\",reason=\"" + reason + "\"} " + std::to_string(value) + "\n";
}

struct WorkloadCase {
  std::string name;
  std::string ownerKind = "";  // "" for a pod without a controller
  std::string ownerName = "";
  std::string hashLabel = "";  // pod-template-hash, "" for none
  Workload want;
  std::string apiVersion = "apps/v1";
};

class WorkloadOf : public ::testing::TestWithParam<WorkloadCase> {};

TEST_P(WorkloadOf, NamesTheWorkloadFromThePodAlone) {
  const WorkloadCase& c = GetParam();
  testing::PodBuilder b("web-7d4b9c8f5-x2x9q");
  if (c.ownerKind.empty()) b.bare();
  if (!c.hashLabel.empty()) b.label("pod-template-hash", c.hashLabel);
  auto pod = b.build();
  if (!c.ownerKind.empty()) {
    api::Pod p = *pod;
    p.owners = {{api::Symbol(c.apiVersion), api::Symbol(c.ownerKind), api::Symbol(c.ownerName), "uid", true}};
    EXPECT_EQ(workloadOf(p), c.want);
  } else {
    EXPECT_EQ(workloadOf(*pod), c.want);
  }
}

INSTANTIATE_TEST_SUITE_P(Table, WorkloadOf,
                         ::testing::Values(WorkloadCase{.name = "replicaSetOfADeploymentIsTheDeployment",
                                                        .ownerKind = "ReplicaSet",
                                                        .ownerName = "web-7d4b9c8f5",
                                                        .hashLabel = "7d4b9c8f5",
                                                        .want = {"Deployment", "web"}},
                                           WorkloadCase{.name = "deploymentNameWithDashesKeepsThem",
                                                        .ownerKind = "ReplicaSet",
                                                        .ownerName = "payment-api-v2-5f6d7c",
                                                        .hashLabel = "5f6d7c",
                                                        .want = {"Deployment", "payment-api-v2"}},
                                           WorkloadCase{.name = "hashNotTheNameSuffixStaysReplicaSet",
                                                        .ownerKind = "ReplicaSet",
                                                        .ownerName = "web-7d4b9c8f5",
                                                        .hashLabel = "abc123",
                                                        .want = {"ReplicaSet", "web-7d4b9c8f5"}},
                                           WorkloadCase{.name = "suffixWithoutADashStaysReplicaSet",
                                                        .ownerKind = "ReplicaSet",
                                                        .ownerName = "web7d4b9c8f5",
                                                        .hashLabel = "7d4b9c8f5",
                                                        .want = {"ReplicaSet", "web7d4b9c8f5"}},
                                           WorkloadCase{.name = "nameThatIsOnlyTheHashStaysReplicaSet",
                                                        .ownerKind = "ReplicaSet",
                                                        .ownerName = "-7d4b9c8f5",
                                                        .hashLabel = "7d4b9c8f5",
                                                        .want = {"ReplicaSet", "-7d4b9c8f5"}},
                                           WorkloadCase{.name = "noHashLabelStaysReplicaSet",
                                                        .ownerKind = "ReplicaSet",
                                                        .ownerName = "web-7d4b9c8f5",
                                                        .want = {"ReplicaSet", "web-7d4b9c8f5"}},
                                           WorkloadCase{.name = "replicaSetOfAnotherGroupStaysItself",
                                                        .ownerKind = "ReplicaSet",
                                                        .ownerName = "web-7d4b9c8f5",
                                                        .hashLabel = "7d4b9c8f5",
                                                        .want = {"ReplicaSet", "web-7d4b9c8f5"},
                                                        .apiVersion = "example.com/v1"},
                                           WorkloadCase{.name = "statefulSet",
                                                        .ownerKind = "StatefulSet",
                                                        .ownerName = "db",
                                                        .hashLabel = "x",
                                                        .want = {"StatefulSet", "db"}},
                                           WorkloadCase{.name = "barePodHasNoWorkload", .want = {"", ""}}),
                         [](const auto& info) { return info.param.name; });

TEST(OwnerEvictions, ASeriesIdleForTheWindowIsRemovedAndStartsAgainFromOne) {
  testing::FakeClock clock;
  Metrics m("0.1.0", {}, ProcSource::system(), {.idle = 1h, .maxSeries = 10});
  m.ownerEvicted("shop", {"Deployment", "web"}, "RemoveDuplicates", clock.now());
  clock.advance(30min);
  m.ownerEvicted("shop", {"Deployment", "web"}, "RemoveDuplicates", clock.now());
  m.ownerEvicted("shop", {"StatefulSet", "db"}, "RemoveDuplicates", clock.now());
  clock.advance(59min);
  m.forgetIdleOwners(clock.now());
  EXPECT_EQ(ownerLines(m), series("shop", "Deployment", "web", "RemoveDuplicates", 2) +
                               series("shop", "StatefulSet", "db", "RemoveDuplicates", 1))
      << "the idle window counts from the last eviction";

  m.ownerEvicted("shop", {"StatefulSet", "db"}, "RemoveDuplicates", clock.now());
  clock.advance(1min);
  m.forgetIdleOwners(clock.now());
  EXPECT_EQ(ownerLines(m), series("shop", "StatefulSet", "db", "RemoveDuplicates", 2));
  EXPECT_EQ(m.ownerSeries(), 1u);

  m.ownerEvicted("shop", {"Deployment", "web"}, "RemoveDuplicates", clock.now());
  EXPECT_EQ(ownerLines(m), series("shop", "Deployment", "web", "RemoveDuplicates", 1) +
                               series("shop", "StatefulSet", "db", "RemoveDuplicates", 2));
}

TEST(OwnerEvictions, BeyondTheCapEvictionsCountUnderTheirPluginsOverflowSeries) {
  testing::FakeClock clock;
  Metrics m("0.1.0", {}, ProcSource::system(), {.idle = 1h, .maxSeries = 2});
  m.ownerEvicted("a", {"Deployment", "one"}, "S", clock.now());
  m.ownerEvicted("a", {"Deployment", "two"}, "S", clock.now());
  m.ownerEvicted("b", {"Deployment", "three"}, "S", clock.now());
  m.ownerEvicted("b", {"Deployment", "four"}, "S", clock.now());
  m.ownerEvicted("b", {"Deployment", "four"}, "T", clock.now());
  m.ownerEvicted("a", {"Deployment", "one"}, "S", clock.now());
  EXPECT_EQ(ownerLines(m), series("", "", "_overflow", "S", 2) + series("", "", "_overflow", "T", 1) +
                               series("a", "Deployment", "one", "S", 2) + series("a", "Deployment", "two", "S", 1));
  EXPECT_EQ(m.ownerSeries(), 2u);

  // A full table first lets its idle series go: a new workload then gets its own series.
  clock.advance(40min);
  m.ownerEvicted("a", {"Deployment", "one"}, "S", clock.now());
  clock.advance(20min);
  m.ownerEvicted("c", {"DaemonSet", "agent"}, "S", clock.now());
  EXPECT_EQ(ownerLines(m), series("a", "Deployment", "one", "S", 3) + series("c", "DaemonSet", "agent", "S", 1));
}

TEST(OwnerEvictions, ACapOfZeroCountsEveryEvictionUnderOverflow) {
  testing::FakeClock clock;
  Metrics m("0.1.0", {}, ProcSource::system(), {.idle = 1h, .maxSeries = 0});
  m.ownerEvicted("a", {"Deployment", "one"}, "S", clock.now());
  m.ownerEvicted("b", {"", ""}, "S", clock.now());
  EXPECT_EQ(ownerLines(m), series("", "", "_overflow", "S", 2));
}

TEST(OwnerEvictions, AnEvictionThroughTheSinkCountsUnderTheDeploymentNotItsReplicaSet) {
  testing::FakeClock clock;
  Metrics m("0.1.0", {});
  EvictionMetrics sink(m, clock);
  auto before = testing::PodBuilder("web-5f6d7c-a")
                    .owner("ReplicaSet", "web-5f6d7c")
                    .label("pod-template-hash", "5f6d7c")
                    .node("n1")
                    .build();
  auto after = testing::PodBuilder("web-8e9a0b-b")
                   .owner("ReplicaSet", "web-8e9a0b")
                   .label("pod-template-hash", "8e9a0b")
                   .node("n1")
                   .build();
  auto bare = testing::PodBuilder("debug").bare().node("n1").build();
  sink.evict({before.get(), "n1", "RemovePodsViolatingNodeTaints", "p", "why"});
  sink.evict({after.get(), "n1", "RemovePodsViolatingNodeTaints", "p", "why"});
  sink.evict({bare.get(), "n1", "RemovePodsViolatingNodeTaints", "p", "why"});
  sink.refused({{after.get(), "n1", "RemovePodsViolatingNodeTaints", "p", "why"},
                framework::EvictResult::refused(framework::Refusal::Pdb, "pdb", "no budget")});
  EXPECT_EQ(ownerLines(m), series("default", "", "", "RemovePodsViolatingNodeTaints", 1) +
                               series("default", "Deployment", "web", "RemovePodsViolatingNodeTaints", 2))
      << "a rollout's new ReplicaSet keeps the series; refusals are not counted";
}

TEST(OwnerEvictions, IsInTheCatalogue) {
  EXPECT_NE(Metrics::catalogue("0.1.0").find("# TYPE kdesched_owner_evictions_total counter"), std::string::npos);
}

}  // namespace
}  // namespace kdesched::metrics
