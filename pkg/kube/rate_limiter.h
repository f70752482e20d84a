// The client-side token bucket client-go puts in front of every request (rest.Config QPS/Burst,
// the descheduler's --client-connection-qps/--client-connection-burst). It keeps one process from
// flooding the API server during relists and eviction bursts; API Priority and Fairness is the
// server's own protection and answers with 429 when we still overdo it.
#pragma once

#include <memory>
#include <mutex>

#include "pkg/base/clock.h"

namespace kdesched::kube {

inline constexpr double kDefaultQps = 5;
inline constexpr int kDefaultBurst = 10;

class TokenBucket {
 public:
  // As client-go: qps 0 means the default 5 and burst 0 the default 10; a negative qps disables
  // limiting. The bucket starts full, so the first `burst` requests go out at once.
  TokenBucket(double qps, int burst, std::shared_ptr<Clock> clock);

  // Takes one token and returns how long the caller must wait before using it (zero when one was
  // available). Later callers queue behind earlier reservations, so waits never overlap.
  Clock::Duration reserve();
  // reserve() plus the wait; false when `cancel` fired during the wait.
  bool acquire(Cancellation* cancel);

  double qps() const { return qps_; }
  int burst() const { return burst_; }
  bool unlimited() const { return qps_ < 0; }

 private:
  std::shared_ptr<Clock> clock_;
  double qps_;
  int burst_;
  std::mutex mu_;
  double tokens_;
  Clock::TimePoint last_;
};

}  // namespace kdesched::kube
