#include "pkg/kube/stall_watchdog.h"

namespace kdesched::kube {

StallWatchdog::StallWatchdog(Cancellation* parent, Clock::Duration quiet, std::shared_ptr<Clock> clock)
    : clock_(std::move(clock)),
      quiet_(quiet),
      last_(std::make_shared<std::atomic<Clock::Duration::rep>>(clock_->now().time_since_epoch().count())),
      parent_(parent) {
  if (parent_) subscription_ = parent_->subscribe([c = cancel_] { c->cancel(); });
  arm();
}

void StallWatchdog::arm() {
  if (quiet_ <= Clock::Duration::zero()) return;
  // The thread holds shared handles only: it may still be waking up after the owner is gone.
  timer_ = std::thread([c = cancel_, done = done_, expired = expired_, last = last_, quiet = quiet_, clock = clock_] {
    for (;;) {
      const Clock::TimePoint due = Clock::TimePoint(Clock::Duration(last->load())) + quiet;
      const Clock::TimePoint now = clock->now();
      if (now >= due) {
        expired->store(true);
        c->cancel();
        return;
      }
      if (!clock->sleepFor(due - now, done.get())) return;
    }
  });
}

StallWatchdog::~StallWatchdog() {
  disarm();
  if (parent_) parent_->unsubscribe(subscription_);
}

void StallWatchdog::progress() { last_->store(clock_->now().time_since_epoch().count()); }

void StallWatchdog::disarm() {
  done_->cancel();
  if (timer_.joinable()) timer_.join();
}

void StallWatchdog::rearm(Clock::Duration quiet) {
  disarm();
  if (expired()) return;
  done_ = std::make_shared<Cancellation>();
  quiet_ = quiet;
  progress();
  arm();
}

}  // namespace kdesched::kube
