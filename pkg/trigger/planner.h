// Event-triggered descheduling: store events become seeds; after a short debounce one scoped run
// evaluates only the deschedule plugins that apply, on only the affected pods, through the same
// engine and evictor as a periodic cycle. Balance plugins run on a longer debounce. The periodic
// cycle stays as the safety net.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "pkg/framework/cycle.h"
#include "pkg/trigger/affected.h"
#include "pkg/trigger/antiflapping.h"
#include "pkg/trigger/config.h"

namespace kdesched::trigger {

class Planner {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // Runs one scoped cycle; `firstEvent` is when the earliest event of the batch arrived.
  using Runner = std::function<void(const framework::CycleScope& scope, TimePoint firstEvent)>;
  using EventCounter = std::function<void(const std::string& kind)>;

  Planner(cluster::Store& store, TriggerConfig config, Runner runner, EventCounter counter = nullptr,
          AntiFlapping* antiFlapping = nullptr);
  ~Planner();

  // Subscribes to the store and starts the debounce thread. Call after the caches synced (the
  // initial LIST is not a burst of "new" violations; the first periodic cycle covers it).
  void start();
  void stop();

  // Looks at `pod` again with `plugins` after `seconds` (a candidate refused by the owner cooldown:
  // its violation stays, but no new event may ever come to re-trigger it).
  void retryLater(const std::string& pod, const std::set<std::string>& plugins, double seconds);

  // Waits until no batch is pending, deferred or running (tests).
  void drain();

 private:
  struct Deferred {
    std::string pod;
    std::set<std::string> plugins;
    TimePoint due;
    TimePoint firstEvent;
  };
  void onEvent(const cluster::StoreEvent& e);
  void loop();
  // Moves candidates whose own controller is mid-rollout out of `scope` into the deferred list.
  void deferMidRollout(const cluster::Snapshot& snapshot, framework::CycleScope& scope, TimePoint firstEvent);

  cluster::Store& store_;
  TriggerConfig config_;
  Runner runner_;
  EventCounter counter_;
  AntiFlapping* antiFlapping_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool started_ = false;
  bool busy_ = false;
  Seeds seeds_;
  std::optional<TimePoint> firstEvent_;  // of the pending deschedule batch
  TimePoint lastEvent_{};
  std::optional<TimePoint> balanceDue_;
  TimePoint balanceFirstEvent_{};
  std::vector<Deferred> deferred_;
  std::thread thread_;
};

}  // namespace kdesched::trigger
