// Pods that time alone will make candidates (PodLifeTime's maxPodLifeTimeSeconds, a condition's
// minTimeSinceLastTransitionSeconds, RemoveFailedPods' minPodLifetimeSeconds), each with the time
// it comes due, so TriggeredRuns looks at a pod when its time comes instead of up to one interval
// later.
//
// Bounded twice: only deadlines within a horizon are kept (TriggeredRuns rescans the store every
// half horizon, which also rebuilds the queue after a restart or a relist), and at most `capacity`
// of them, the earliest. A deadline left out is still caught by the periodic cycle.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/base/clock.h"

namespace kdesched::trigger {

// When a plugin will pick a pod: wall time, whole seconds.
struct PodDeadline {
  api::Timestamp at;
  std::string plugin;
};
// Every enabled DeadlinePlugin's answer for `pod` at wall time `now` (the daemon builds it from
// the profiles).
using DeadlineFn = std::function<std::vector<PodDeadline>(const api::Pod& pod, api::Timestamp now)>;

struct DeadlineEntry {
  api::PodName pod;
  std::set<std::string> plugins;
  Clock::TimePoint due;
};

// Not thread-safe: TriggeredRuns calls it under its lock.
class DeadlineQueue {
 public:
  explicit DeadlineQueue(std::size_t capacity) : capacity_(capacity) {}

  // Sets the pod's deadline (replacing any it had). When the queue is full, the latest deadline
  // goes, which may be this one: returns false then.
  bool set(DeadlineEntry entry);
  void erase(const api::PodName& pod);
  void clear();

  std::optional<Clock::TimePoint> next() const;
  // Removes and returns the entries due at `now`, earliest first.
  std::vector<DeadlineEntry> take(Clock::TimePoint now);
  std::size_t size() const { return byPod_.size(); }
  bool empty() const { return byPod_.empty(); }

 private:
  struct Slot {
    Clock::TimePoint due;
    std::set<std::string> plugins;
  };
  std::size_t capacity_;
  std::unordered_map<api::PodName, Slot, api::PodNameHash, api::PodNameEq> byPod_;
  std::set<std::pair<Clock::TimePoint, api::PodName>> byTime_;
};

}  // namespace kdesched::trigger
