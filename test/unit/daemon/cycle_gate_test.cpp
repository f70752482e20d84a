#include "pkg/daemon/cycle_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kdesched::daemon {
namespace {

using ::testing::HasSubstr;

evictor::Decision decision() { return evictor::Decision{nullptr, "n1", "Plugin", "default", "why"}; }

TEST(CacheHealth, TracksRelistsPerKindUntilListed) {
  CacheHealth h;
  EXPECT_EQ(h.relisting(), "");
  EXPECT_EQ(h.relistRequests(), 0u);
  h.relistRequested(api::Kind::Pod);
  h.relistRequested(api::Kind::PodDisruptionBudget);
  EXPECT_THAT(h.relisting(), HasSubstr("Pod"));
  EXPECT_THAT(h.relisting(), HasSubstr("PodDisruptionBudget"));
  EXPECT_EQ(h.relistRequests(), 2u);
  h.listed(api::Kind::PodDisruptionBudget);
  EXPECT_EQ(h.relisting(), "Pod");
  h.listed(api::Kind::Pod);
  EXPECT_EQ(h.relisting(), "");
  // A first list (no relist requested) changes nothing.
  h.listed(api::Kind::Node);
  EXPECT_EQ(h.relisting(), "");
  EXPECT_EQ(h.relistRequests(), 2u);
}

TEST(CycleGate, AdmitsWhenNothingStandsInTheWay) {
  kube::Cancellation stop;
  CacheHealth h;
  CycleGate gate(stop, h, h.relistRequests(), [] { return true; });
  EXPECT_EQ(gate.admit(decision()).refusal, framework::Refusal::None);
  CycleGate noElection(stop, h, h.relistRequests());
  EXPECT_EQ(noElection.admit(decision()).refusal, framework::Refusal::None);
}

TEST(CycleGate, RefusesAfterShutdown) {
  kube::Cancellation stop;
  CacheHealth h;
  CycleGate gate(stop, h, h.relistRequests());
  stop.cancel();
  auto r = gate.admit(decision());
  EXPECT_EQ(r.refusal, framework::Refusal::ApiError);
  EXPECT_EQ(r.by, "shutdown");
}

TEST(CycleGate, RefusesWhenARelistWasRequestedSinceTheSnapshot) {
  kube::Cancellation stop;
  CacheHealth h;
  CycleGate gate(stop, h, h.relistRequests());
  h.relistRequested(api::Kind::Pod);
  auto r = gate.admit(decision());
  EXPECT_EQ(r.refusal, framework::Refusal::ApiError);
  EXPECT_EQ(r.by, "cache");
  EXPECT_THAT(r.detail, HasSubstr("Pod"));
  // Still refused once the relist is done: the snapshot predates it.
  h.listed(api::Kind::Pod);
  EXPECT_EQ(gate.admit(decision()).by, "cache");
  // A cycle that starts after the relist is admitted.
  CycleGate next(stop, h, h.relistRequests());
  EXPECT_EQ(next.admit(decision()).refusal, framework::Refusal::None);
}

TEST(CycleGate, RefusesWhenNotLeader) {
  kube::Cancellation stop;
  CacheHealth h;
  bool leader = true;
  CycleGate gate(stop, h, h.relistRequests(), [&] { return leader; });
  EXPECT_EQ(gate.admit(decision()).refusal, framework::Refusal::None);
  leader = false;
  auto r = gate.admit(decision());
  EXPECT_EQ(r.refusal, framework::Refusal::ApiError);
  EXPECT_EQ(r.by, "leader election");
}

}  // namespace
}  // namespace kdesched::daemon
