// The daemon's moves (pkg/moves), when the policy enables them: the advisor the cycles' eviction
// chain asks, the tracker that follows each move (fed by the store's pod changes, its deadlines
// checked every second on its own thread), the outcomes counted in the metrics. A dry run plans
// and logs moves but restarts nothing, so nothing is followed.
#pragma once

#include <memory>
#include <thread>

#include "pkg/base/clock.h"
#include "pkg/cluster/store.h"
#include "pkg/moves/advisor.h"
#include "pkg/moves/tracker.h"

namespace kdesched::daemon {

class Runtime;

class LiveMoves {
 public:
  // Null when the policy does not enable moves.
  static std::unique_ptr<LiveMoves> start(const policy::MovesConfig& config, Runtime& rt, bool dryRun);
  LiveMoves(const policy::MovesConfig& config, Runtime& rt, bool dryRun);
  ~LiveMoves();
  LiveMoves(const LiveMoves&) = delete;
  LiveMoves& operator=(const LiveMoves&) = delete;

  evictor::MoveAdvisor* advisor() { return advisor_.get(); }
  // To add to the cycle's sink observers: the tracker (null in a dry run).
  evictor::Sink* observer() { return tracker_.get(); }

 private:
  Clock& clock_;
  Cancellation done_;
  moves::ApiWorkloads workloads_;
  std::unique_ptr<moves::MoveTracker> tracker_;
  std::unique_ptr<moves::Advisor> advisor_;
  std::thread deadlines_;
  cluster::Store::Subscription podChanges_;  // feeds tracker_; reset first in the destructor
};

}  // namespace kdesched::daemon
