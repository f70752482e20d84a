// CPU time, for budgets charged in CPU rather than wall time: a run that waits (for the API
// server, for a core another process holds) is not charged for the wait. An interface, so tests
// charge made-up costs (test/unit/testing/fake_clock.h).
#pragma once

#include <memory>

#include "pkg/base/clock.h"

namespace kdesched {

class ThreadCpuClock {
 public:
  virtual ~ThreadCpuClock() = default;
  // The CPU time the calling thread has used so far.
  virtual Clock::Duration now() = 0;
};

// CLOCK_THREAD_CPUTIME_ID.
std::shared_ptr<ThreadCpuClock> systemThreadCpuClock();

}  // namespace kdesched
