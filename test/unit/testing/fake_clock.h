// A clock for tests: time moves only when the test says so. By default sleepFor() returns at once,
// advancing the clock by what was asked and recording it, so code that backs off, debounces or
// waits for a deadline runs in microseconds and never depends on the machine's speed.
//
// With blockingSleeps(), sleepFor() instead waits until advance() moves the clock past the
// sleeper's deadline (or its Cancellation fires), like a real sleep whose time the test controls:
// for background threads (a renewal loop, a request's deadline) that must move only when the test
// moves them. sleeps() lists each sleep as it starts, so a test knows who is waiting before it
// advances.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "pkg/base/clock.h"
#include "pkg/base/cpu_clock.h"

namespace kdesched::testing {

class FakeClock final : public Clock {
 public:
  // Wall time starts at 2026-01-01T00:00:00Z, monotonic time at an arbitrary non-zero point.
  FakeClock() = default;
  ~FakeClock() override = default;

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
    if (blocking_) return blockingSleep(d, cancel);
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
    {
      std::lock_guard<std::mutex> lock(mu_);
      now_ += d;
      wall_ += std::chrono::duration_cast<WallTime::duration>(d);
    }
    cv_.notify_all();
  }
  void advanceSeconds(double s) { advance(seconds(s)); }
  std::vector<Duration> sleeps() {
    std::lock_guard<std::mutex> lock(mu_);
    return sleeps_;
  }
  // Call before any thread uses the clock.
  void blockingSleeps() { blocking_ = true; }
  // Threads blocked in a sleep right now (blocking mode): advance only once the sleeper a test
  // means to wake has started to wait, or the advance lands before its deadline is set.
  std::size_t sleepers() {
    std::lock_guard<std::mutex> lock(mu_);
    return sleepers_;
  }

 private:
  bool blockingSleep(Duration d, Cancellation* cancel) {
    CancelSubscription wakeOnCancel(cancel, [this] {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu_);
    const TimePoint until = now_ + d;
    sleeps_.push_back(d);
    ++sleepers_;
    cv_.wait(lock, [&] { return now_ >= until || (cancel && cancel->cancelled()); });
    --sleepers_;
    return !(cancel && cancel->cancelled());
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool blocking_ = false;
  TimePoint now_ = TimePoint{} + std::chrono::hours(1000);
  WallTime wall_ = WallTime{} + std::chrono::seconds(1767225600);
  std::vector<Duration> sleeps_;
  std::size_t sleepers_ = 0;
};

// CPU time that moves only when the test charges it.
class FakeCpuClock final : public ThreadCpuClock {
 public:
  Clock::Duration now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return used_;
  }
  void chargeSeconds(double s) {
    std::lock_guard<std::mutex> lock(mu_);
    used_ += seconds(s);
  }

 private:
  std::mutex mu_;
  Clock::Duration used_{0};
};

}  // namespace kdesched::testing
