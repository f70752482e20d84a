#include "pkg/daemon/sync_waker.h"

namespace kdesched::daemon {

void SyncWaker::wake() {
  std::shared_ptr<Cancellation> sleeper;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = true;
    sleeper = current_;
  }
  if (sleeper) sleeper->cancel();
}

void SyncWaker::sleep(Clock& clock, Clock::Duration d, Cancellation& stop) {
  auto wakeup = std::make_shared<Cancellation>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_) {
      pending_ = false;
      return;
    }
    current_ = wakeup;
  }
  {
    CancelSubscription onStop(&stop, [wakeup] { wakeup->cancel(); });
    clock.sleepFor(d, wakeup.get());
  }
  std::lock_guard<std::mutex> lock(mu_);
  current_.reset();
  pending_ = false;
}

}  // namespace kdesched::daemon
