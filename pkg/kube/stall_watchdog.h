// Cuts a request that has stopped making progress. A watch-list's initial state must end with its
// bookmark; a server that never sends it (a proxy that buffers, a server that ignored
// sendInitialEvents and has gone quiet) would otherwise hold the cache unsynced until the watch's
// timeoutSeconds, five to ten minutes. An open watch must carry an event or a bookmark at least
// every minute (the API server's watch cache sends one a minute when asked); one that does not is
// on a connection that died without a word (an API server replica gone, a conntrack entry or a
// load balancer's flow dropped), which TCP alone notices only after many minutes. This bounds the
// silence, not the whole stream: a large cluster's initial state may take a minute to stream, but
// never pauses that long.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "pkg/base/clock.h"

namespace kdesched::kube {

// A Cancellation that fires when `parent` (may be null) does, or when `quiet` passes on `clock`
// without a call to progress(). `quiet` zero: only the parent. The timer is a thread sleeping on
// the clock; with a test's FakeClock use blockingSleeps(), or it fires at once.
class StallWatchdog {
 public:
  StallWatchdog(Cancellation* parent, Clock::Duration quiet, std::shared_ptr<Clock> clock);
  ~StallWatchdog();
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

  // Pass this to the request; it stays valid (following the parent) after disarm().
  Cancellation* get() { return cancel_.get(); }
  // Something arrived: the silence counts from now. Cheap (one clock read, one atomic store).
  void progress();
  // The silence (not the parent) cut the request.
  bool expired() const { return expired_->load(); }
  // Stops the timer; the cancellation still follows the parent.
  void disarm();
  // A new bound on the silence, counted from now (zero: none), e.g. a watch-list's initial state
  // done, the watch that follows it. Not after the watchdog expired.
  void rearm(Clock::Duration quiet);
  Clock::Duration quiet() const { return quiet_; }

 private:
  void arm();

  std::shared_ptr<Clock> clock_;
  Clock::Duration quiet_;
  std::shared_ptr<Cancellation> cancel_ = std::make_shared<Cancellation>();
  std::shared_ptr<Cancellation> done_ = std::make_shared<Cancellation>();
  std::shared_ptr<std::atomic<bool>> expired_ = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<std::atomic<Clock::Duration::rep>> last_;  // of the latest progress, since the epoch
  Cancellation* parent_;
  std::uint64_t subscription_ = 0;
  std::thread timer_;
};

}  // namespace kdesched::kube
