// Events off the eviction path, as upstream's event broadcaster sends them: recordEvent() queues
// the Event and returns, and one sender thread POSTs them in order, so an eviction worker never
// waits on an Event (upstream's queue, client-go's broadcaster, holds 1000 and drops beyond; so
// does this one, with one warning). Before the process exits, drain() sends what is queued within
// a time limit; on shutdown (the Cancellation) what is left is dropped with one log line instead
// of failing request by request. Background Events (PodEvent::background: DeschedulingBlocked) wait
// in a second, smaller queue, sent only when the first is empty, and are not waited for on exit.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "pkg/base/clock.h"
#include "pkg/evictor/eviction_api.h"

namespace kdesched::evictor {

class AsyncEvents final : public EvictionApi {
 public:
  static constexpr std::size_t kCapacity = 1000;
  static constexpr std::size_t kBackgroundCapacity = 100;

  AsyncEvents(EvictionApi& inner, std::shared_ptr<Clock> clock, Cancellation* cancel = nullptr,
              std::size_t capacity = kCapacity);
  ~AsyncEvents() override;  // drops what is still queued (call drain() first to send it)
  AsyncEvents(const AsyncEvents&) = delete;
  AsyncEvents& operator=(const AsyncEvents&) = delete;

  ApiAnswer evict(const EvictionRequest& r) override { return inner_.evict(r); }
  PodCheck checkPod(const std::string& ns, const std::string& name, const std::string& uid) override {
    return inner_.checkPod(ns, name, uid);
  }
  ApiAnswer getApps(const std::string& resource, const std::string& ns, const std::string& name,
                    std::string& body) override {
    return inner_.getApps(resource, ns, name, body);
  }
  ApiAnswer restartDeployment(const RestartRequest& r) override { return inner_.restartDeployment(r); }
  void recordEvent(const PodEvent& e) override;

  // Blocks until every queued Event is sent; those still queued `limit` from now are dropped, and
  // so are the background ones still queued (they say why a pod stayed; the process is leaving).
  void drain(Clock::Duration limit);

  std::size_t dropped();  // full queue, drain limit or shutdown
  bool draining();        // a drain() is waiting

 private:
  void run();
  void dropQueued(const char* why);  // with mu_ held
  bool queued() const { return !queue_.empty() || !background_.empty(); }

  EvictionApi& inner_;
  std::shared_ptr<Clock> clock_;
  Cancellation* cancel_;
  const std::size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<PodEvent> queue_;
  std::deque<PodEvent> background_;
  bool sending_ = false;
  bool stopping_ = false;
  bool warnedFull_ = false;
  std::optional<Clock::TimePoint> drainDeadline_;
  std::size_t dropped_ = 0;
  std::thread sender_;
};

}  // namespace kdesched::evictor
