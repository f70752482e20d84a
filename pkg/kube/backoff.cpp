#include "pkg/kube/backoff.h"

#include <algorithm>
#include <random>

namespace kdesched::kube {

Backoff::Backoff(BackoffOptions options, std::shared_ptr<Clock> clock, std::function<double()> random)
    : options_(options), clock_(std::move(clock)), random_(std::move(random)), base_(options_.initial) {
  if (!random_) random_ = defaultRandom();
}

Clock::Duration Backoff::next() {
  const Clock::TimePoint now = clock_->now();
  if (!started_ || now - last_ > options_.resetAfter) base_ = options_.initial;
  started_ = true;
  last_ = now;
  const Clock::Duration base = base_;
  const auto grown = std::chrono::duration_cast<Clock::Duration>(base_ * options_.factor);
  base_ = std::min<Clock::Duration>(grown, options_.cap);
  if (options_.jitter <= 0) return base;
  const double r = std::clamp(random_(), 0.0, 1.0);
  return base + std::chrono::duration_cast<Clock::Duration>(base * (options_.jitter * r));
}

std::function<double()> defaultRandom() {
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  return [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
}

}  // namespace kdesched::kube
