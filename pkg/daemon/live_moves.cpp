#include "pkg/daemon/live_moves.h"

#include "pkg/daemon/runtime.h"
#include "pkg/metrics/metrics.h"

namespace kdesched::daemon {

std::unique_ptr<LiveMoves> LiveMoves::start(const policy::MovesConfig& config, Runtime& rt, bool dryRun) {
  if (!config.enabled) return nullptr;
  return std::make_unique<LiveMoves>(config, rt, dryRun);
}

LiveMoves::LiveMoves(const policy::MovesConfig& config, Runtime& rt, bool dryRun)
    : clock_(rt.clock()), workloads_(rt.asyncEvents()) {
  if (!dryRun) {
    metrics::Metrics* m = rt.metrics();
    cluster::Store& store = rt.store();
    tracker_ = std::make_unique<moves::MoveTracker>(
        clock_, &rt.asyncEvents(),
        [m](const moves::MoveOutcome& o) {
          if (m) m->moveFinished(o.succeeded, o.readySeconds);
        },
        [&store] { return store.snapshot(); });
    moves::MoveTracker* tracker = tracker_.get();
    podChanges_ = store.subscribe([tracker](const cluster::StoreEvent& e) {
      if (const auto* pod = std::get_if<cluster::Change<api::Pod>>(&e)) tracker->podChanged(*pod);
    });
    deadlines_ = std::thread([this] {
      while (clock_.sleepFor(std::chrono::seconds(1), &done_)) tracker_->tick();
    });
  }
  advisor_ = std::make_unique<moves::Advisor>(config, workloads_, tracker_.get());
}

LiveMoves::~LiveMoves() {
  podChanges_.reset();
  done_.cancel();
  if (deadlines_.joinable()) deadlines_.join();
}

}  // namespace kdesched::daemon
