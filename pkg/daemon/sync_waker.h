// Wakes the wait for the first sync as soon as a reflector has listed (or failed), instead of at
// the next poll: a small cluster lists in milliseconds, and a one-shot run's whole life is a few
// hundred, so a poll interval was a visible share of it.
#pragma once

#include <memory>
#include <mutex>

#include "pkg/base/clock.h"
#include "pkg/kube/reflector.h"

namespace kdesched::daemon {

class SyncWaker final : public kube::ReflectorObserver {
 public:
  void onList(api::Kind, std::size_t, double) override { wake(); }
  void onError(api::Kind, const kube::ReflectorFailure&) override { wake(); }

  // Sleeps up to `d` on `clock`; returns early when a reflector listed or failed since the last
  // call, or when `stop` fires.
  void sleep(Clock& clock, Clock::Duration d, Cancellation& stop);

 private:
  void wake();

  std::mutex mu_;
  std::shared_ptr<Cancellation> current_;  // the sleep in progress
  bool pending_ = false;                   // woken while nobody slept
};

}  // namespace kdesched::daemon
