// What the rest of kdesched reports, turned into metrics: eviction outcomes (an evictor sink beside
// the real one), plugin run times (a cycle observer) and watch health (a reflector observer). They
// live here, above the packages they observe, so that none of those packages knows about metrics.
#pragma once

#include "pkg/base/clock.h"
#include "pkg/evictor/sink.h"
#include "pkg/framework/cycle.h"
#include "pkg/kube/reflector.h"
#include "pkg/metrics/metrics.h"

namespace kdesched::metrics {

// Outcomes under upstream's descheduler_pods_evicted_total (result success, error or a limit's
// text) and kdesched_evictions_refused_total{reason}. A refusal by a live gate (shutdown, a stale
// cache, lost leadership) is a refusal only: the pod and the API server were fine. A success is
// counted under its workload too (kdesched_owner_evictions_total), timed by `clock`.
class EvictionMetrics : public evictor::Sink {
 public:
  EvictionMetrics(Metrics& m, Clock& clock) : m_(m), clock_(clock) {}
  framework::EvictResult evict(const evictor::Decision& d) override;
  void refused(const evictor::RefusedDecision& r) override;

  // Upstream's result label for a limit hit: its error's fixed text (the refusal's detail carries
  // counts and node names, which would make a label value per node and limit); null otherwise.
  static const char* limitResult(framework::Refusal r);

 private:
  Metrics& m_;
  Clock& clock_;
};

// descheduler_strategy_duration_seconds per plugin run.
class PluginTimer : public framework::CycleObserver {
 public:
  explicit PluginTimer(Metrics& m) : m_(m) {}
  void pluginFinished(const std::string& profile, const std::string& plugin, double seconds,
                      const Status& status) override;

 private:
  Metrics& m_;
};

// Watch restarts and relists per resource kind.
class WatchMetrics : public kube::ReflectorObserver {
 public:
  explicit WatchMetrics(Metrics& m) : m_(m) {}
  void onWatchRestart(api::Kind kind, const std::string& reason) override;
  void onRelist(api::Kind kind, const std::string& reason) override;

 private:
  Metrics& m_;
};

}  // namespace kdesched::metrics
