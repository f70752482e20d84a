#include "pkg/base/clock.h"

#include <thread>
#include <vector>

namespace kdesched {

void Cancellation::cancel() {
  std::vector<Callback> run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    for (auto& [id, cb] : callbacks_) run.push_back(std::move(cb));
    callbacks_.clear();
  }
  cv_.notify_all();
  for (auto& cb : run) cb();
}

bool Cancellation::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool Cancellation::waitFor(std::chrono::nanoseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, d, [this] { return cancelled_; });
}

std::uint64_t Cancellation::subscribe(Callback callback) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cancelled_) {
      std::uint64_t id = nextId_++;
      callbacks_.emplace(id, std::move(callback));
      return id;
    }
  }
  callback();
  return 0;
}

void Cancellation::unsubscribe(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  callbacks_.erase(id);
}

namespace {

class SystemClock final : public Clock {
 public:
  TimePoint now() override { return std::chrono::steady_clock::now(); }
  WallTime wallNow() override { return std::chrono::system_clock::now(); }
  bool sleepFor(Duration d, Cancellation* cancel) override {
    if (cancel) return !cancel->waitFor(d);
    std::this_thread::sleep_for(d);
    return true;
  }
};

}  // namespace

std::shared_ptr<Clock> systemClock() {
  static const auto clock = std::make_shared<SystemClock>();
  return clock;
}

}  // namespace kdesched
