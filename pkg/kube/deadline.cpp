#include "pkg/kube/deadline.h"

#include <cstdio>

namespace kdesched::kube {

RequestDeadline::RequestDeadline(Cancellation* parent, Clock::Duration timeout, std::shared_ptr<Clock> clock)
    : parent_(parent), timeout_(timeout) {
  if (parent_) subscription_ = parent_->subscribe([c = cancel_] { c->cancel(); });
  // The limit counts from here, not from whenever the thread gets to run. The thread holds shared
  // handles only: it may still be waking up after the request is over.
  const Clock::TimePoint until = clock->now() + timeout;
  timer_ = std::thread([c = cancel_, done = done_, expired = expired_, until, clock = std::move(clock)] {
    if (clock->sleepFor(until - clock->now(), done.get())) {
      expired->store(true);
      c->cancel();
    }
  });
}

RequestDeadline::~RequestDeadline() {
  disarm();
  if (parent_) parent_->unsubscribe(subscription_);
}

void RequestDeadline::disarm() {
  done_->cancel();
  if (timer_.joinable()) timer_.join();
}

std::string RequestDeadline::explain(const std::string& error) const {
  return expired() ? "no answer within " + formatDuration(timeout_) + ": " + error : error;
}

std::string formatDuration(Clock::Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  char buf[32];
  if (ms % 1000 == 0)
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(ms / 1000));
  else if (ms < 1000)
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(ms));
  else
    std::snprintf(buf, sizeof buf, "%.3gs", static_cast<double>(ms) / 1000.0);
  return buf;
}

}  // namespace kdesched::kube
