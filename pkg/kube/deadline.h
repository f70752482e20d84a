// A time limit on one API request. The HTTP client's own timer only measures silence (cpprestsdk
// resets it on every byte received) and cannot be driven by a test; this one counts from the start
// of the request on the injected clock, so "a hung API server holds a request for at most N
// seconds" holds for any transport and is checked in unit tests with a fake clock.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "pkg/base/clock.h"

namespace kdesched::kube {

// A Cancellation that fires when `parent` (may be null) does or when `timeout` has passed on
// `clock`, whichever comes first. The timer is a thread sleeping on the clock: with a test's
// FakeClock it fires only when the test advances the clock (blockingSleeps()).
class RequestDeadline {
 public:
  RequestDeadline(Cancellation* parent, Clock::Duration timeout, std::shared_ptr<Clock> clock);
  ~RequestDeadline();
  RequestDeadline(const RequestDeadline&) = delete;
  RequestDeadline& operator=(const RequestDeadline&) = delete;

  // Pass this to the request.
  Cancellation* get() { return cancel_.get(); }
  // The time limit (not the parent) cut the request.
  bool expired() const { return expired_->load(); }
  // Stops the timer; the cancellation still follows the parent. For a watch once the server
  // answered: its stream outlives the limit on opening it.
  void disarm();
  // "<e>" or, when the limit cut the request, "no answer within <timeout>: <e>".
  std::string explain(const std::string& error) const;

 private:
  std::shared_ptr<Cancellation> cancel_ = std::make_shared<Cancellation>();
  std::shared_ptr<Cancellation> done_ = std::make_shared<Cancellation>();
  std::shared_ptr<std::atomic<bool>> expired_ = std::make_shared<std::atomic<bool>>(false);
  Cancellation* parent_;
  std::uint64_t subscription_ = 0;
  Clock::Duration timeout_;
  std::thread timer_;
};

// "30s", "1.5s", "250ms": a duration as logs and errors print it.
std::string formatDuration(Clock::Duration d);

}  // namespace kdesched::kube
