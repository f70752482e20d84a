// Event-triggered descheduling: store events become seeds; after a short debounce one scoped run
// evaluates only the deschedule plugins that apply, on only the affected pods, through the same
// engine and evictor as a periodic cycle. Balance plugins run on a longer debounce. The periodic
// cycle stays as the safety net.
//
// The timing lives in TriggerSchedule (no threads, no clock of its own); TriggeredRuns adds the
// store subscription, the mapping of seeds to pods, and a thin driver thread that sleeps until the
// schedule's next wakeup by the injected clock. Tests call runDue() instead of start().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "pkg/base/clock.h"
#include "pkg/base/cpu_clock.h"
#include "pkg/cluster/store.h"
#include "pkg/framework/cycle.h"
#include "pkg/trigger/antiflapping.h"
#include "pkg/trigger/schedule.h"

namespace kdesched::trigger {

// A snapshot of the cache and the cache's generation read right before it was taken
// (evictor::CacheFreshness::relistRequests): a run decides on it only while the generation stands,
// so a relist between taking the snapshot and an eviction refuses the eviction, however long the
// run waited for its turn.
struct RunSnapshot {
  cluster::SnapshotPtr snapshot;  // null: none taken yet
  std::uint64_t generation = 0;
};

// Runs one scoped cycle for TriggeredRuns (the daemon's cycle runner), on the calling thread (the
// CPU budget charges that thread's CPU time). `firstEvent` is when the earliest event of the batch
// arrived; `taken` (may be empty: the runner takes its own) is the snapshot TriggeredRuns chose the
// pods from, taken by snapshot(), so a run under churn indexes the cache once, not twice.
class ScopedRunner {
 public:
  virtual ~ScopedRunner() = default;
  // A snapshot with its generation; empty when the runner has no cache of its own (TriggeredRuns
  // then takes the store's, generation 0).
  virtual RunSnapshot snapshot() { return {}; }
  virtual void runScoped(const framework::CycleScope& scope, Clock::TimePoint firstEvent, RunSnapshot taken = {}) = 0;
};

class TriggeredRuns {
 public:
  using EventCounter = std::function<void(const std::string& kind)>;

  // `store`, `runner` and `antiFlapping` (may be null) must outlive this object; the store must not
  // deliver events after it is gone. `cpu` charges the CPU budget (null: the system's).
  TriggeredRuns(cluster::Store& store, policy::TriggerConfig config, ScopedRunner& runner, std::shared_ptr<Clock> clock,
                EventCounter counter = nullptr, AntiFlapping* antiFlapping = nullptr,
                std::shared_ptr<ThreadCpuClock> cpu = nullptr);
  ~TriggeredRuns();
  TriggeredRuns(const TriggeredRuns&) = delete;
  TriggeredRuns& operator=(const TriggeredRuns&) = delete;

  // Before subscribe(): which events the enabled plugins can act on, and the enabled plugins'
  // deadlines (none: no deadline queue).
  void setInterest(Interest interest);
  void setDeadlines(DeadlineFn deadlines) { deadlineFn_ = std::move(deadlines); }

  // Subscribes to the store (once), and fills the deadline queue from it. Call after the caches
  // synced: the initial LIST is not a burst of "new" violations; the first periodic cycle covers it.
  void subscribe();
  // subscribe(), then the driver thread: it runs what is due, as it comes due.
  void start();
  void stop();

  // Looks at `pod` again with `plugins` after `seconds` (a candidate refused by the owner cooldown:
  // its violation stays, but no new event may ever come to re-trigger it).
  void retryLater(const api::PodName& pod, const std::set<std::string>& plugins, double seconds);

  // Runs what is due at the clock's now, on the caller's thread; false when nothing was due.
  bool runDue();
  std::optional<Clock::TimePoint> nextWakeup();
  // Makes the driver look at the clock again (after a test moved a fake clock).
  void wake();
  // Waits until nothing is pending or running (tests; with the driver started).
  void drain();

 private:
  void onEvent(const cluster::StoreEvent& e);
  void loop();
  void run(DueWork due, Clock::TimePoint now);
  void runDeadlines(const std::vector<DeadlineEntry>& due);
  // After a capacity change's balance run, with MakeRoomForPendingPods enabled: its run scoped to
  // every unbound pending pod (what is still fragmented once the scheduler has had its retry).
  void runPending(Clock::TimePoint firstEvent);
  // The pod's earliest deadline within reach, as an entry of the queue.
  std::optional<DeadlineEntry> deadlineOf(const api::Pod& pod);
  void updateDeadline(const cluster::StoreEvent& e);
  // Looks at every pod of the store for deadlines within the horizon; schedules the next look.
  void rescanDeadlines();
  // Moves candidates whose own controller is mid-rollout out of `scope`; returns them, due after
  // the rollout grace.
  std::vector<Deferred> deferMidRollout(const cluster::Snapshot& snapshot, framework::CycleScope& scope,
                                        Clock::TimePoint firstEvent, Clock::TimePoint now) const;

  cluster::Store& store_;
  policy::TriggerConfig config_;
  ScopedRunner& runner_;
  std::shared_ptr<Clock> clock_;
  std::shared_ptr<ThreadCpuClock> cpu_;
  EventCounter counter_;
  AntiFlapping* antiFlapping_;
  DeadlineFn deadlineFn_;
  bool pendingPods_ = false;  // Interest::pendingPods

  std::mutex mu_;
  std::condition_variable cv_;
  TriggerSchedule schedule_;
  bool subscribed_ = false;
  bool stopping_ = false;
  bool busy_ = false;
  std::thread thread_;
  cluster::Store::Subscription subscription_;
};

}  // namespace kdesched::trigger
