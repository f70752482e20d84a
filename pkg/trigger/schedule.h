// The timing of TriggeredRuns, without threads, locks or a clock of its own: the seeds gathered from store
// events, the candidates deferred to a later time, and when each is due. Every call takes the time
// it happens at, so tests step it through any sequence of events with made-up times.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/base/clock.h"
#include "pkg/policy/extension.h"
#include "pkg/trigger/affected.h"
#include "pkg/trigger/carriers.h"
#include "pkg/trigger/deadlines.h"

namespace kdesched::trigger {

// A candidate to look at again later: deferred mid-rollout, or refused by a gate that says when
// to come back (the owner cooldown, a budget's window end, minIntervalPerOwner).
struct Deferred {
  api::PodName pod;
  std::set<std::string> plugins;
  Clock::TimePoint due;
  // Where kdesched_event_to_eviction_seconds counts from: the event of the batch it came from
  // (deferred mid-rollout), or `due` for a retry (the wait was the gate's, not a slow reaction).
  Clock::TimePoint firstEvent;
  bool retry = false;
};

// What is due at one time.
struct DueWork {
  Seeds seeds;  // pods and nodes (never the balance flag)
  Clock::TimePoint seedsFirstEvent{};
  std::vector<Deferred> deferred;
  bool balance = false;
  Clock::TimePoint balanceFirstEvent{};
  std::vector<DeadlineEntry> deadlines;
  bool rescan = false;  // time to look for deadlines within the horizon again
  bool empty() const {
    return seeds.pods.empty() && seeds.nodes.empty() && deferred.empty() && !balance && deadlines.empty() && !rescan;
  }
};

// Not thread-safe: TriggeredRuns calls it under its lock.
class TriggerSchedule {
 public:
  explicit TriggerSchedule(policy::TriggerConfig config, Interest interest = {})
      : config_(config), interest_(interest), deadlines_(config.maxDeadlines) {}
  void setInterest(Interest interest) { interest_ = interest; }

  // Adds what `event` seeds, at `now`. A deschedule batch is due at the latest `debounce` after its
  // first event, and `quiet` after its first event that may have broken a rule: a pod bound or
  // relabelled counts only when it carries required anti-affinity or some term in the cache could
  // select it (CarrierKeys); node changes and status changes always count. So a violation is looked
  // at within `quiet` however much churn surrounds it, and churn that cannot break a rule waits for
  // the debounce. Either way no batch runs sooner than the CPU budget allows after the last one
  // (ran()). A balance run is due `balanceDebounce` after the first event that asked for one.
  // Returns the event's kind ("" when it cannot matter).
  std::string onEvent(const cluster::StoreEvent& event, Clock::TimePoint now);
  // Counts the required anti-affinity terms of every pod in `snapshot` (then events keep it).
  void seedCarriers(const cluster::Snapshot& snapshot) { carriers_.rebuild(snapshot); }
  // Adds a deferred candidate; a pod already waiting keeps its place (and its due time).
  void defer(Deferred d);
  // A balance run, `balanceDebounce` after `now` unless one is already pending.
  void requestBalance(Clock::TimePoint now);
  // Sets or clears (nullopt) a pod's deadline; one beyond the horizon from `now` is left to a rescan.
  // False when it was left out.
  bool setDeadline(const api::PodName& pod, std::optional<DeadlineEntry> entry, Clock::TimePoint now);
  void scheduleRescan(Clock::TimePoint at) { rescanDue_ = at; }
  std::size_t deadlineCount() const { return deadlines_.size(); }

  // The earliest time something is due; none when nothing is pending.
  std::optional<Clock::TimePoint> nextWakeup() const;
  // Removes and returns what is due at `now`.
  DueWork take(Clock::TimePoint now);
  bool idle() const;
  // A deschedule batch's run ended at `end` after `cost` of CPU time: the next batch waits until
  // cost / cpuShare has passed since that run started (taken as end - cost), so triggered runs take
  // at most `cpuShare` of one core however fast events come.
  void ran(Clock::TimePoint end, Clock::Duration cost);

 private:
  Clock::TimePoint batchDue() const;

  policy::TriggerConfig config_;
  Interest interest_;
  DeadlineQueue deadlines_;
  std::optional<Clock::TimePoint> rescanDue_;
  Seeds seeds_;
  std::optional<Clock::TimePoint> firstEvent_;   // of the pending deschedule batch
  std::optional<Clock::TimePoint> firstUrgent_;  // the pending batch's first event that may break a rule
  Clock::TimePoint notBefore_{};                 // the CPU budget: no batch before this
  CarrierKeys carriers_;
  std::optional<Clock::TimePoint> balanceDue_;
  Clock::TimePoint balanceFirstEvent_{};
  std::vector<Deferred> deferred_;
};

}  // namespace kdesched::trigger
