#include "pkg/evictor/async_events.h"

#include "pkg/base/log.h"

namespace kdesched::evictor {

AsyncEvents::AsyncEvents(EvictionApi& inner, std::shared_ptr<Clock> clock, Cancellation* cancel, std::size_t capacity)
    : inner_(inner), clock_(std::move(clock)), cancel_(cancel), capacity_(capacity == 0 ? 1 : capacity) {
  sender_ = std::thread([this] { run(); });
}

AsyncEvents::~AsyncEvents() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (!queue_.empty()) dropQueued("the process is stopping");
  }
  cv_.notify_all();
  sender_.join();
}

void AsyncEvents::recordEvent(const PodEvent& e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    if (queue_.size() >= capacity_) {
      ++dropped_;
      if (!warnedFull_)
        log::warn("event queue full: dropping events until it drains",
                  {{"capacity", static_cast<std::int64_t>(capacity_)}, {"pod", e.ns + "/" + e.podName}});
      warnedFull_ = true;
      return;
    }
    queue_.push_back(e);
  }
  cv_.notify_all();
}

void AsyncEvents::drain(Clock::Duration limit) {
  std::unique_lock<std::mutex> lock(mu_);
  drainDeadline_ = clock_->now() + limit;
  cv_.notify_all();
  cv_.wait(lock, [&] { return queue_.empty() && !sending_; });
  drainDeadline_.reset();
}

std::size_t AsyncEvents::dropped() {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

bool AsyncEvents::draining() {
  std::lock_guard<std::mutex> lock(mu_);
  return drainDeadline_.has_value();
}

void AsyncEvents::dropQueued(const char* why) {
  dropped_ += queue_.size();
  log::warn("events not sent", {{"events", static_cast<std::int64_t>(queue_.size())}, {"why", why}});
  queue_.clear();
}

void AsyncEvents::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping
    if (cancel_ && cancel_->cancelled()) {
      dropQueued("shutting down");
    } else if (drainDeadline_ && clock_->now() >= *drainDeadline_) {
      dropQueued("the time to send them before exiting ran out");
    } else {
      PodEvent e = std::move(queue_.front());
      queue_.pop_front();
      sending_ = true;
      lock.unlock();
      inner_.recordEvent(e);
      lock.lock();
      sending_ = false;
      if (queue_.size() < capacity_ / 2) warnedFull_ = false;
    }
    cv_.notify_all();
  }
}

}  // namespace kdesched::evictor
