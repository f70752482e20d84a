// A clock for tests: time moves only when the test says so. sleepFor() returns at once, advancing
// the clock by what was asked and recording it, so code that backs off, debounces or waits for a
// deadline runs in microseconds and never depends on the machine's speed.
#pragma once

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "pkg/base/clock.h"

namespace kdesched::testing {

class FakeClock final : public Clock {
 public:
  // Wall time starts at 2026-01-01T00:00:00Z, monotonic time at an arbitrary non-zero point.
  FakeClock() = default;

  TimePoint now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  WallTime wallNow() override {
    std::lock_guard<std::mutex> lock(mu_);
    return wall_;
  }
  bool sleepFor(Duration d, Cancellation* cancel) override {
    if (cancel && cancel->cancelled()) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      now_ += d;
      wall_ += std::chrono::duration_cast<WallTime::duration>(d);
      sleeps_.push_back(d);
    }
    std::this_thread::yield();
    return !(cancel && cancel->cancelled());
  }
  void advance(Duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
    wall_ += std::chrono::duration_cast<WallTime::duration>(d);
  }
  void advanceSeconds(double s) { advance(seconds(s)); }
  std::vector<Duration> sleeps() {
    std::lock_guard<std::mutex> lock(mu_);
    return sleeps_;
  }

 private:
  std::mutex mu_;
  TimePoint now_ = TimePoint{} + std::chrono::hours(1000);
  WallTime wall_ = WallTime{} + std::chrono::seconds(1767225600);
  std::vector<Duration> sleeps_;
};

}  // namespace kdesched::testing
