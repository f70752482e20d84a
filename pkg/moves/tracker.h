// Follows each move through: after the Deployment's restart, its new pod appears, becomes Ready
// (where it landed, against the landing estimate), and the old pod goes; by the deadline, or the
// move failed. One log line per step, an Event on the Deployment with the outcome, and the outcome
// handed to `report` (metrics). It also keeps the rules moves obey across runs: one move in flight
// per Deployment, and a Deployment whose move failed is not moved again until its spec changes
// (someone looked at it), whatever the owner cooldown says.
//
// Threads: evict() comes from the cycle's thread (an observer of its sink), podChanged() from the
// store's listener (watch threads), tick() from whoever drives the deadlines; all under one mutex,
// and a listener with no move in flight returns after one atomic load.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "pkg/base/clock.h"
#include "pkg/cluster/snapshot.h"
#include "pkg/cluster/store.h"
#include "pkg/evictor/eviction_api.h"
#include "pkg/evictor/sink.h"

namespace kdesched::moves {

struct MoveOutcome {
  bool succeeded = false;
  std::string ns;
  std::string deployment;
  std::string oldPod;
  std::string oldNode;
  std::string plugin;
  std::string reason;
  std::string newPod;        // "" when none appeared
  std::string newNode;       // where it landed
  std::string expectedNode;  // the landing estimate ("" unestimated, "none": it fit nowhere)
  double readySeconds = -1;  // restart → new pod Ready; -1: never
  double seconds = 0;        // restart → outcome
  std::string detail;        // a failure: what was missing at the deadline
};

class MoveTracker : public evictor::Sink {
 public:
  using Report = std::function<void(const MoveOutcome&)>;
  // The cache as it is now: a move starts to be followed after its restart was answered, when the
  // new pod may already be there (or Ready, or the old one gone).
  using CurrentPods = std::function<cluster::SnapshotPtr()>;
  // `events` (may be null) gets the Deployment's Events; `report` (may be empty) every outcome;
  // `current` (may be empty) catches a move up with what happened before it was followed.
  MoveTracker(Clock& clock, evictor::EvictionApi* events, Report report, CurrentPods current = nullptr);

  // A move the sink carried out: follow it. Evictions are not moves and are ignored.
  framework::EvictResult evict(const evictor::Decision& d) override;
  void refused(const evictor::RefusedDecision&) override {}
  // A change to a pod, from the store.
  void podChanged(const cluster::Change<api::Pod>& c);
  // Fails the moves past their deadline.
  void tick();
  // Why the Deployment (at `generation`) may not be moved now; nullopt: it may.
  std::optional<std::string> busy(const std::string& ns, const std::string& deployment, std::int64_t generation);
  std::size_t inFlight() const { return count_.load(std::memory_order_acquire); }

 private:
  struct Move {
    evictor::MovePlan plan;
    std::string oldPod, oldUid, oldNode, oldHash, plugin, reason, expectedNode;
    Clock::TimePoint started, deadline;
    std::string newPod, newNode;
    std::optional<Clock::TimePoint> readyAt, goneAt;
  };
  // Records the old pod gone (once, with its log line); true when the move is over (Ready and gone).
  bool markGone(Move& m, Clock::TimePoint now);
  // Steps of `m` seen in `pod` (`deleted`: it is gone); true when the move is over.
  bool observe(Move& m, const api::Pod& pod, bool deleted, Clock::TimePoint now);
  // What the cache already shows of the move under `key`, right after it started.
  void catchUp(const std::string& key, const std::string& ns);
  void finish(const std::string& key, Move m, bool succeeded, std::string detail, Clock::TimePoint now);

  Clock& clock_;
  evictor::EvictionApi* events_;
  Report report_;
  CurrentPods current_;
  std::mutex mu_;
  std::atomic<std::size_t> count_{0};
  std::map<std::string, Move> moves_;  // by "namespace/deployment"
  struct Failed {
    std::int64_t generation;  // the Deployment's after our restart: a later one means its spec changed
    std::string why;
  };
  std::map<std::string, Failed> failed_;
};

}  // namespace kdesched::moves
