#include "pkg/evictor/cycle_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/testing/fake_clock.h"

namespace kdesched::evictor {
namespace {

using ::testing::HasSubstr;

Decision decision() { return Decision{nullptr, "n1", "Plugin", "default", "why"}; }

// The cache as the gate sees it: relists requested, and which kinds are relisting now.
struct FakeCache : CacheFreshness {
  std::uint64_t requests = 0;
  std::string pending;
  std::string staleNow;
  std::uint64_t relistRequests() const override { return requests; }
  std::string relisting() const override { return pending; }
  std::string stale() const override { return staleNow; }
  void relistRequested(const std::string& kind) {
    ++requests;
    pending = kind;
  }
  void listed() { pending.clear(); }
};

struct FakeLeader : Leadership {
  bool leader = true;
  bool isLeader() const override { return leader; }
};

TEST(CycleGate, AdmitsWhenNothingStandsInTheWay) {
  Cancellation stop;
  FakeCache h;
  FakeLeader leader;
  CycleGate gate(stop, h, h.relistRequests(), &leader);
  EXPECT_EQ(gate.admit(decision()).refusal, framework::Refusal::None);
  CycleGate noElection(stop, h, h.relistRequests());
  EXPECT_EQ(noElection.admit(decision()).refusal, framework::Refusal::None);
}

TEST(CycleGate, RefusesAfterShutdown) {
  Cancellation stop;
  FakeCache h;
  CycleGate gate(stop, h, h.relistRequests());
  stop.cancel();
  auto r = gate.admit(decision());
  EXPECT_EQ(r.refusal, framework::Refusal::Shutdown);
  EXPECT_EQ(r.by, "shutdown");
}

TEST(CycleGate, RefusesWhenARelistWasRequestedSinceTheSnapshot) {
  Cancellation stop;
  FakeCache h;
  CycleGate gate(stop, h, h.relistRequests());
  h.relistRequested("Pod");
  auto r = gate.admit(decision());
  EXPECT_EQ(r.refusal, framework::Refusal::StaleCache);
  EXPECT_EQ(r.by, "cache");
  EXPECT_THAT(r.detail, HasSubstr("Pod"));
  // Still refused once the relist is done: the snapshot predates it.
  h.listed();
  EXPECT_EQ(gate.admit(decision()).by, "cache");
  // A cycle that starts after the relist is admitted.
  CycleGate next(stop, h, h.relistRequests());
  EXPECT_EQ(next.admit(decision()).refusal, framework::Refusal::None);
}

// Belt and braces: the runner starts no run on a stale cache, and an eviction of a run during which
// the cache went stale is refused as such (not as an API error).
TEST(CycleGate, RefusesWhileTheCacheIsStale) {
  Cancellation stop;
  FakeCache h;
  CycleGate gate(stop, h, h.relistRequests());
  h.staleNow = "pods (watch: 403 Forbidden: pods is forbidden)";
  auto r = gate.admit(decision());
  EXPECT_EQ(r.refusal, framework::Refusal::StaleCache);
  EXPECT_EQ(r.by, "cache");
  EXPECT_THAT(r.detail, HasSubstr("pods (watch: 403 Forbidden"));
  h.staleNow.clear();
  EXPECT_EQ(gate.admit(decision()).refusal, framework::Refusal::None) << "resynced: admitted again";
}

TEST(CycleGate, RefusesWhenNotLeader) {
  Cancellation stop;
  FakeCache h;
  FakeLeader leader;
  CycleGate gate(stop, h, h.relistRequests(), &leader);
  EXPECT_EQ(gate.admit(decision()).refusal, framework::Refusal::None);
  leader.leader = false;
  auto r = gate.admit(decision());
  EXPECT_EQ(r.refusal, framework::Refusal::NotLeader);
  EXPECT_EQ(r.by, "leader election");
}

}  // namespace
}  // namespace kdesched::evictor

namespace kdesched::evictor {
namespace {

TEST(CycleGate, RefusesAPodAnEarlierRunEvicted) {
  Cancellation stop;
  FakeCache h;
  RecentEvictions recent(std::make_shared<testing::FakeClock>());
  api::Pod pod;
  pod.uid = "uid-1";
  api::Pod other;
  other.uid = "uid-2";
  Decision d{&pod, "n1", "Plugin", "default", "why"};
  Decision o{&other, "n1", "Plugin", "default", "why"};
  {
    CycleGate first(stop, h, h.relistRequests(), nullptr, &recent);
    ASSERT_EQ(first.admit(d).refusal, framework::Refusal::None);
    first.evicted(d);
  }
  CycleGate next(stop, h, h.relistRequests(), nullptr, &recent);
  auto r = next.admit(d);
  EXPECT_EQ(r.refusal, framework::Refusal::Filter);
  EXPECT_THAT(r.detail, HasSubstr("earlier run"));
  EXPECT_EQ(next.admit(o).refusal, framework::Refusal::None);
  // Without the memory (a dry run) nothing is remembered.
  CycleGate dry(stop, h, h.relistRequests());
  dry.evicted(d);
  EXPECT_EQ(dry.admit(d).refusal, framework::Refusal::None);
}

TEST(RecentEvictions, ForgetsAfterTheTtl) {
  auto clock = std::make_shared<testing::FakeClock>();
  RecentEvictions recent(clock, std::chrono::seconds(600));
  recent.add("uid-1");
  recent.add("");
  EXPECT_FALSE(recent.contains(""));
  clock->advanceSeconds(600);
  EXPECT_TRUE(recent.contains("uid-1"));
  clock->advanceSeconds(0.001);
  EXPECT_FALSE(recent.contains("uid-1"));
  // Expired entries go on the next add; a fresh one stays.
  recent.add("uid-2");
  EXPECT_FALSE(recent.contains("uid-1"));
  EXPECT_TRUE(recent.contains("uid-2"));
}

TEST(RecentEvictions, ForgetsAPodWhoseEvictionFailedAfterAll) {
  // A pipelined eviction is remembered when submitted; a refusal from the server takes it back, so
  // the next run may try the pod again.
  RecentEvictions recent(std::make_shared<testing::FakeClock>());
  recent.add("uid-1");
  recent.add("uid-2");
  recent.forget("uid-1");
  recent.forget("never-added");
  EXPECT_FALSE(recent.contains("uid-1"));
  EXPECT_TRUE(recent.contains("uid-2"));
}

}  // namespace
}  // namespace kdesched::evictor
