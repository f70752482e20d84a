#include "pkg/daemon/cycle_runner.h"

#include <atomic>
#include <cmath>

#include "pkg/base/log.h"

namespace kdesched::daemon {
namespace {

using framework::ApiFailure;
using framework::Refusal;

double millisRounded(double seconds) { return std::round(seconds * 1000) / 1000; }

}  // namespace

// Counts evictions the API server refused for reasons that will not go away by themselves, so a
// CronJob whose ServiceAccount cannot evict shows up as failing instead of quietly succeeding. A
// pod already gone or replaced, throttling and a shutdown's cut requests are not such reasons.
class CycleRunner::HardFailures : public evictor::Sink {
 public:
  framework::EvictResult evict(const evictor::Decision&) override { return framework::EvictResult::success(); }
  void refused(const evictor::RefusedDecision& r) override {
    if (r.result.refusal != Refusal::ApiError) return;
    switch (r.result.api) {
      case ApiFailure::Unauthorized:
      case ApiFailure::Forbidden:
      case ApiFailure::Rejected:
      case ApiFailure::ServerError:
      case ApiFailure::Unreachable: ++count_; return;
      default: return;
    }
  }
  std::size_t count() const { return count_.load(); }

 private:
  std::atomic<std::size_t> count_{0};
};

// Candidates the owner cooldown refused in the current run.
class CycleRunner::CooldownRefusals : public evictor::Sink {
 public:
  framework::EvictResult evict(const evictor::Decision&) override { return framework::EvictResult::success(); }
  void refused(const evictor::RefusedDecision& r) override {
    if (r.result.refusal == Refusal::AntiFlapping && r.result.suppression == framework::Suppression::Cooldown)
      pending_.emplace_back(api::PodName::of(*r.wanted.pod), r.wanted.plugin);
  }
  std::vector<std::pair<api::PodName, std::string>> take() { return std::exchange(pending_, {}); }

 private:
  std::vector<std::pair<api::PodName, std::string>> pending_;
};

CycleRunner::CycleRunner(CycleRunnerParts parts)
    : parts_(std::move(parts)),
      hardFailures_(std::make_unique<HardFailures>()),
      cooldownRefusals_(std::make_unique<CooldownRefusals>()) {
  std::vector<evictor::Sink*> observers = parts_.observers;
  observers.push_back(hardFailures_.get());
  observers.push_back(cooldownRefusals_.get());
  evictor::RecentEvictions* recent = parts_.recent;
  // A pipelined eviction the server refused was remembered as evicted when it was submitted:
  // forget it, so a later run may try the pod again.
  sink_ = std::make_unique<evictor::PipelinedSink>(parts_.primary, std::move(observers), parts_.concurrency,
                                                   [recent](const evictor::Decision& d, const framework::EvictResult&) {
                                                     if (recent) recent->forget(d.pod->uid);
                                                   });
}

CycleRunner::~CycleRunner() = default;

void CycleRunner::setCooldownRetries(trigger::TriggeredRuns* retries) {
  std::lock_guard<std::mutex> lock(mu_);
  cooldownRetries_ = retries;
}

std::size_t CycleRunner::hardFailures() const { return hardFailures_->count(); }

std::string CycleRunner::whyNot() const {
  if (parts_.stop.cancelled()) return "shutting down";
  if (parts_.leader && !parts_.leader->isLeader()) return "not the leader";
  if (std::string relisting = parts_.cache.relisting(); !relisting.empty()) return "relisting " + relisting;
  if (std::string stale = parts_.cache.stale(); !stale.empty()) return "cache stale: " + stale;
  return "";
}

std::optional<usage::ClusterUsage> CycleRunner::measureUsage(const cluster::Snapshot& snapshot,
                                                             const framework::CycleScope& scope) {
  if (!parts_.usage || !parts_.usage->wanted(scope)) return std::nullopt;
  // Staleness is judged against the cycle's start, and Prometheus is asked about that moment.
  const auto asOf = static_cast<api::Timestamp>(std::floor(parts_.clock->unixSeconds()));
  usage::ClusterUsage measured = parts_.usage->measure(asOf, &parts_.stop);
  parts_.usage->countLeftOut(measured, framework::cycleNodes(snapshot, parts_.engine.policy.nodeSelectorParsed));
  return measured;
}

trigger::RunSnapshot CycleRunner::snapshot() {
  // The generation first: a relist that starts (or ends) after this read refuses the evictions.
  trigger::RunSnapshot taken;
  taken.generation = parts_.cache.relistRequests();
  taken.snapshot = parts_.store.snapshot();
  return taken;
}

RunReport CycleRunner::runOnce(const framework::CycleScope& scope, trigger::RunSnapshot taken) {
  std::lock_guard<std::mutex> lock(mu_);
  RunReport report;
  report.skipReason = whyNot();
  if (!report.skipReason.empty()) return report;
  // A run handed a snapshot may have waited here while a periodic cycle ran: the cache may have
  // been relisted since (a 410, a refused watch), and the snapshot is then from before it.
  if (taken.snapshot && taken.generation != parts_.cache.relistRequests()) {
    report.skipReason = "the cache was relisted since the run's snapshot";
    return report;
  }
  report.ran = true;
  if (!taken.snapshot) taken = snapshot();
  const std::uint64_t relists = taken.generation;
  const cluster::SnapshotPtr snapshot = std::move(taken.snapshot);
  report.pods = snapshot->podCount();
  const Clock::TimePoint start = parts_.clock->now();
  std::optional<usage::ClusterUsage> measured = measureUsage(*snapshot, scope);
  evictor::CycleGate cycleGate(parts_.stop, parts_.cache, relists, parts_.leader, parts_.recent);
  evictor::GateChain gates({&cycleGate, parts_.budgets, parts_.antiFlapping});
  evictor::EvictionChain chain(parts_.engine.limits(), *sink_, &gates, parts_.moves);
  gates.runStarted();
  report.cycle =
      parts_.engine.runCycle(*snapshot, chain, parts_.pluginObserver, scope, measured ? &*measured : nullptr);
  const evictor::FlushResult late = sink_->flush();
  gates.runFinished();
  // With evictions in flight after the strategies return, the run lasts until their answers.
  report.cycle.seconds = parts_.clock->secondsSince(start);
  if (cooldownRetries_)
    for (const auto& [pod, plugin] : cooldownRefusals_->take())
      cooldownRetries_->retryLater(pod, {plugin}, parts_.ownerCooldownSeconds + 0.1);
  else
    cooldownRefusals_->take();
  // 0.1 s past the window's end (which is exclusive): the budget is over when the run starts.
  if (parts_.budgets)
    for (const evictor::BudgetGate::Retry& r : parts_.budgets->takeRetries())
      if (cooldownRetries_) cooldownRetries_->retryLater(r.pod, {r.plugin}, r.inSeconds + 0.1);
  // The chain counted each submission as evicted; the ones the server refused afterwards move.
  const std::size_t failed = std::min(late.failed, chain.evictedThisCycle());
  report.evicted = chain.evictedThisCycle() - failed;
  report.refused = chain.refusedThisCycle() + failed;
  return report;
}

RunReport CycleRunner::runPeriodic() {
  RunReport r = runOnce();
  if (!r.ran) return r;
  const double seconds = millisRounded(r.cycle.seconds);
  if (r.cycle.skipped)
    log::info("cycle finished", {{"evicted", r.evicted},
                                 {"refused", r.refused},
                                 {"nodes", r.cycle.nodes},
                                 {"pods", r.pods},
                                 {"seconds", seconds},
                                 {"skipped", r.cycle.skipReason}});
  else
    log::info("cycle finished", {{"evicted", r.evicted},
                                 {"refused", r.refused},
                                 {"nodes", r.cycle.nodes},
                                 {"pods", r.pods},
                                 {"seconds", seconds}});
  if (metrics::Metrics* m = parts_.metrics) {
    m->loopDuration(r.cycle.seconds);
    m->cycleSucceeded(parts_.clock->unixSeconds());
    for (api::Kind k : {api::Kind::Pod, api::Kind::Node, api::Kind::Namespace, api::Kind::PodDisruptionBudget,
                        api::Kind::PersistentVolumeClaim})
      m->cacheObjects(std::string(api::toString(k)), static_cast<double>(parts_.store.count(k)));
    const cluster::SnapshotPtr nodes = parts_.store.snapshot();
    m->forgetDepartedNodes([&](const std::string& node) { return nodes->node(node) != nullptr; }, parts_.clock->now());
    m->forgetIdleOwners(parts_.clock->now());
  }
  return r;
}

void CycleRunner::runScoped(const framework::CycleScope& scope, Clock::TimePoint firstEvent,
                            trigger::RunSnapshot taken) {
  RunReport r = runOnce(scope, std::move(taken));
  if (!r.ran) {
    // The periodic cycle that follows recovery looks at everything, these pods included.
    log::debug("triggered run skipped", {{"reason", r.skipReason}});
    return;
  }
  const double delay = parts_.clock->secondsSince(firstEvent);
  log::info("triggered run finished", {{"evicted", r.evicted},
                                       {"refused", r.refused},
                                       {"candidates", scope.pods ? scope.pods->size() : 0},
                                       {"balance", scope.runBalance},
                                       {"seconds", millisRounded(r.cycle.seconds)},
                                       {"event_to_decision_seconds", millisRounded(delay)}});
  if (metrics::Metrics* m = parts_.metrics) {
    m->triggerRun();
    for (std::size_t i = 0; i < r.evicted; ++i) m->eventToEviction(delay);
  }
}

}  // namespace kdesched::daemon
