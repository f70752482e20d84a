// Exponential backoff with jitter and a reset after a healthy period, as client-go's
// ExponentialBackoffManager does for reflectors: base 800 ms doubling up to a 30 s cap, each wait
// drawn from [base, base × (1 + jitter)], and back to 800 ms once no backoff was needed for 2 min.
// The reset is what keeps a long-lived daemon from waiting 30 s after one blip a day later.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "pkg/base/clock.h"

namespace kdesched::kube {

struct BackoffOptions {
  std::chrono::nanoseconds initial = std::chrono::milliseconds(800);
  double factor = 2.0;
  double jitter = 1.0;
  std::chrono::nanoseconds cap = std::chrono::seconds(30);
  std::chrono::nanoseconds resetAfter = std::chrono::minutes(2);
};

class Backoff {
 public:
  // `random` returns uniform values in [0, 1); tests pass a constant to make waits exact.
  Backoff(BackoffOptions options, std::shared_ptr<Clock> clock, std::function<double()> random);

  // The next wait. Consecutive calls grow the base; a call more than `resetAfter` after the
  // previous one starts over from `initial`.
  Clock::Duration next();

 private:
  BackoffOptions options_;
  std::shared_ptr<Clock> clock_;
  std::function<double()> random_;
  Clock::Duration base_;
  bool started_ = false;
  Clock::TimePoint last_{};
};

// A seeded uniform [0, 1) source, one per caller (std::mt19937 is not thread-safe).
std::function<double()> defaultRandom();

}  // namespace kdesched::kube
