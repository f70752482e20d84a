// What the LeaderElector tests share: a client for the fake transport, a lease short enough to
// step through in a test, and a clock whose sleeps wait for the test to advance it.
#pragma once

#include <chrono>
#include <memory>

#include "pkg/kube/config.h"
#include "pkg/kube/leader_election.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::kube::testing {

inline ClientConfig clientConfig() {
  ClientConfig c;
  c.server = "https://127.0.0.1:6443";
  c.qps = 1000;
  c.burst = 1000;
  return c;
}

// A 1 s lease, renewed within 300 ms, retried every 200 ms.
inline LeaderElectionConfig shortLease() {
  LeaderElectionConfig c;
  c.ns = "default";
  c.identity = "me";
  c.leaseDuration = std::chrono::milliseconds(1000);
  c.renewDeadline = std::chrono::milliseconds(300);
  c.retryPeriod = std::chrono::milliseconds(200);
  return c;
}

inline std::shared_ptr<kdesched::testing::FakeClock> blockingClock() {
  auto clock = std::make_shared<kdesched::testing::FakeClock>();
  clock->blockingSleeps();
  return clock;
}

}  // namespace kdesched::kube::testing
