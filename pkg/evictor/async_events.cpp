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
    if (queued()) dropQueued("the process is stopping");
  }
  cv_.notify_all();
  sender_.join();
}

void AsyncEvents::recordEvent(const PodEvent& e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    if (e.background) {
      // Never more than a few: they are bounded where they are made (BlockedEvents) and go last.
      if (background_.size() >= kBackgroundCapacity || drainDeadline_) {
        ++dropped_;
        return;
      }
      background_.push_back(e);
    } else if (queue_.size() >= capacity_) {
      ++dropped_;
      if (!warnedFull_)
        log::warn("event queue full: dropping events until it drains",
                  {{"capacity", static_cast<std::int64_t>(capacity_)}, {"pod", e.ns + "/" + e.podName}});
      warnedFull_ = true;
      return;
    } else {
      queue_.push_back(e);
    }
  }
  cv_.notify_all();
}

void AsyncEvents::drain(Clock::Duration limit) {
  std::unique_lock<std::mutex> lock(mu_);
  drainDeadline_ = clock_->now() + limit;
  dropped_ += background_.size();
  background_.clear();
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
  const std::size_t n = queue_.size() + background_.size();
  dropped_ += n;
  log::warn("events not sent", {{"events", static_cast<std::int64_t>(n)}, {"why", why}});
  queue_.clear();
  background_.clear();
}

void AsyncEvents::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || queued(); });
    if (!queued()) return;  // stopping
    if (cancel_ && cancel_->cancelled()) {
      dropQueued("shutting down");
    } else if (drainDeadline_ && clock_->now() >= *drainDeadline_) {
      dropQueued("the time to send them before exiting ran out");
    } else {
      std::deque<PodEvent>& from = queue_.empty() ? background_ : queue_;
      PodEvent e = std::move(from.front());
      from.pop_front();
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
