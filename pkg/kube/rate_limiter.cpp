#include "pkg/kube/rate_limiter.h"

#include <algorithm>

namespace kdesched::kube {

TokenBucket::TokenBucket(double qps, int burst, std::shared_ptr<Clock> clock)
    : clock_(std::move(clock)),
      qps_(qps == 0 ? kDefaultQps : qps),
      burst_(burst <= 0 ? kDefaultBurst : burst),
      tokens_(burst_),
      last_(clock_->now()) {}

Clock::Duration TokenBucket::reserve() {
  if (unlimited()) return Clock::Duration::zero();
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::TimePoint now = clock_->now();
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  // Going negative is the queue: each waiter owns the token that accrues after the ones before it.
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::Duration::zero();
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

bool TokenBucket::acquire(Cancellation* cancel) {
  const Clock::Duration wait = reserve();
  if (wait <= Clock::Duration::zero()) return !(cancel && cancel->cancelled());
  return clock_->sleepFor(wait, cancel);
}

}  // namespace kdesched::kube
