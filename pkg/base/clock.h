// Time and cancellation: the one way time reaches kdesched's code. Everything that waits, times out,
// debounces, backs off or ages takes a Clock, so its tests drive a fake clock (test/unit/testing/
// fake_clock.h) instead of sleeping; a Cancellation interrupts every wait (a sleep, a rate-limit
// wait, an open HTTP request) at once on shutdown.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace kdesched {

// A one-shot stop signal shared by everything one owner (a reflector, a request) waits on.
// Once cancelled it stays cancelled.
class Cancellation {
 public:
  using Callback = std::function<void()>;

  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  void cancel();
  bool cancelled() const;
  // Blocks up to `d`; returns true when cancelled (before or during the wait).
  bool waitFor(std::chrono::nanoseconds d);

  // Runs `callback` on cancel(), or at once when already cancelled. Callbacks run on the thread
  // that cancels, without locks held, and may run after unsubscribe() returns if the two race:
  // capture shared handles by value, never raw pointers to short-lived state.
  std::uint64_t subscribe(Callback callback);
  void unsubscribe(std::uint64_t id);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool cancelled_ = false;
  std::uint64_t nextId_ = 1;
  std::map<std::uint64_t, Callback> callbacks_;
};

// Unsubscribes on scope exit.
class CancelSubscription {
 public:
  CancelSubscription(Cancellation* c, Cancellation::Callback callback)
      : c_(c), id_(c ? c->subscribe(std::move(callback)) : 0) {}
  ~CancelSubscription() {
    if (c_) c_->unsubscribe(id_);
  }
  CancelSubscription(const CancelSubscription&) = delete;
  CancelSubscription& operator=(const CancelSubscription&) = delete;

 private:
  Cancellation* c_;
  std::uint64_t id_;
};

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;
  // Monotonic time: durations, deadlines, debounce windows.
  virtual TimePoint now() = 0;
  // Wall-clock time: pod ages, timestamps written to the API server and to metrics.
  virtual WallTime wallNow() = 0;
  // Sleeps for `d` unless `cancel` fires first; returns false when cancelled.
  virtual bool sleepFor(Duration d, Cancellation* cancel) = 0;

  // Seconds since the Unix epoch (wall clock).
  double unixSeconds() { return std::chrono::duration<double>(wallNow().time_since_epoch()).count(); }
  // Seconds elapsed since `start` (monotonic).
  double secondsSince(TimePoint start) { return std::chrono::duration<double>(now() - start).count(); }
};

// Converts seconds (as configured: "1.5s", a timeout) to the clock's duration.
inline Clock::Duration seconds(double s) {
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(s));
}

// The process's clocks (steady_clock and system_clock).
std::shared_ptr<Clock> systemClock();

}  // namespace kdesched
