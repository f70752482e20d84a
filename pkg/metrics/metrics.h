// Prometheus metrics with upstream descheduler's names and labels (existing dashboards keep
// working), plus kdesched's own: refusals by reason, watch health, cache sizes, last good cycle,
// plus the Go client's process_* series (process_collector.h).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/metrics/owner_evictions.h"
#include "pkg/metrics/process_collector.h"

namespace kdesched::metrics {

struct StrategyId {
  std::string strategy;
  std::string profile;
};

class Metrics {
 public:
  // `strategies`: every enabled deschedule/balance plugin per profile; their series exist at zero
  // from the start (upstream only shows build_info until the first eviction). `process`: where the
  // process_* series are read from (tests point it at fixture files). `owners`: the bounds of
  // kdesched_owner_evictions_total (owner_evictions.h).
  Metrics(const std::string& version, const std::vector<StrategyId>& strategies,
          ProcSource process = ProcSource::system(), OwnerEvictionsConfig owners = {});

  // result: "success", "error", or a refusal kind; namespace and node of the pod.
  void podEvicted(const std::string& result, const std::string& strategy, const std::string& profile,
                  const std::string& ns, const std::string& node);
  // Why the evictor (or the API server) said no: filter, preEvictionFilter, limit-*, pdb, api,
  // anti-flapping, shutdown, stale-cache, not-leader.
  void evictionRefused(const std::string& reason, const std::string& strategy, const std::string& profile);
  // descheduler_pods_evicted_total{node} keeps upstream's labels, but the series of a node that
  // has left the cluster go once it has been absent for `grace`: under node churn (autoscaling,
  // spot instances) they would otherwise grow without bound. Called after each periodic cycle with
  // whether a node is in the cluster and the injected clock's time. A node that comes back starts
  // its series from 0, which Prometheus reads as a counter reset (rate() and increase() allow it).
  void forgetDepartedNodes(const std::function<bool(const std::string&)>& present,
                           std::chrono::steady_clock::time_point now,
                           std::chrono::nanoseconds grace = std::chrono::hours(1));
  // kdesched_owner_evictions_total: one successful eviction of a pod of `owner` by plugin
  // `strategy`, at the injected clock's `now`; forgetIdleOwners() removes the series idle for the
  // configured window (called after each periodic cycle).
  void ownerEvicted(const std::string& ns, const Workload& owner, const std::string& strategy,
                    std::chrono::steady_clock::time_point now);
  void forgetIdleOwners(std::chrono::steady_clock::time_point now);
  std::size_t ownerSeries() const { return owners_->ownerSeries(); }
  void loopDuration(double seconds);
  void strategyDuration(const std::string& strategy, const std::string& profile, double seconds);
  void cycleSucceeded(double unixSeconds);
  void watchRestarted(const std::string& resource, const std::string& reason);
  void relisted(const std::string& resource);
  void cacheObjects(const std::string& kind, double count);
  // Event-triggered runs (kdesched extension).
  void triggerEvent(const std::string& kind);
  void triggerRun();
  void eventToEviction(double seconds);
  void evictionSuppressed(const std::string& reason);
  // A make-before-break move ended (pkg/moves): kdesched_moves_total{result}, and the time from its
  // restart to the new pod Ready (kdesched_move_ready_seconds; -1: it never was).
  void moveFinished(bool succeeded, double readySeconds);
  // A MakeRoomForPendingPods try ended: kdesched_pending_helped_total{result}.
  void pendingHelped(const std::string& result);
  // Balancing by measured usage: kdesched_usage_source_up{source} is 1 when the source's last
  // collection or query answered, 0 when it failed; kdesched_usage_nodes_left_out{source} the
  // nodes of the last cycle whose sample was missing, stale or not a number.
  void usageSourceUp(const std::string& source, bool up);
  void usageNodesLeftOut(const std::string& source, double nodes);
  // kdesched_cache_stale{resource}: 1 while a resource's cache cannot be trusted (access refused,
  // or no refresh for too long), else 0. Read from `source` at each scrape rather than pushed: a
  // cache goes stale by time alone, and a scrape must show it without anything else noticing
  // first. Every resource the source names is a series.
  using StaleSource = std::function<std::vector<std::pair<std::string, bool>>()>;
  void cacheStaleSource(StaleSource source);
  // The metrics server's own defences (server.h): kdesched_http_connections_shed_total{victim} a
  // connection closed at the connection limit ("waiting": one that never sent a whole request,
  // "idle": a keep-alive one, "new": the arriving one, every slot answering);
  // kdesched_http_rejections_total{reason} a connection closed or a request refused by a bound
  // (header-too-large, head-timeout, handshake-timeout, handshake-failed, write-timeout, body,
  // method, bad-request); kdesched_http_open_connections.
  void httpConnectionShed(const std::string& victim);
  // kdesched_budget_remaining{budget}: evictions a disruption budget still allows, while it is
  // active; nullopt drops the series (the budget's window closed).
  void budgetRemaining(const std::string& budget, std::optional<double> remaining);
  void httpRejected(const std::string& reason);
  void httpOpenConnections(double open);

  // Text exposition format of everything registered and of the process collector.
  std::string serialize() const;
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }
  // Every metric this build exports, as the exposition's "# HELP" and "# TYPE" lines, families
  // without a series included (a throwaway instance gets one series in each): `kdesched version
  // --metrics`, which the docs check (test/docs/check.py) compares with docs/metrics.md.
  static std::string catalogue(const std::string& version);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  // A prometheus::Registry holds only its own families, so the collector is served beside it.
  std::shared_ptr<ProcessCollector> process_;
  // Registers a family and remembers how to give it one series (catalogue()).
  template <typename Builder>
  auto* add(Builder&& builder);
  std::vector<std::function<void()>> touch_;
  mutable std::mutex staleMu_;
  StaleSource stale_;
  prometheus::Family<prometheus::Counter>* evicted_;
  prometheus::Family<prometheus::Counter>* evictedDeprecated_;
  // Per node: its series in evicted_ and evictedDeprecated_ (in pairs), and since when it has
  // been absent. Guarded by nodesMu_, which podEvicted holds too, so no series is removed between
  // its Add and its Increment.
  struct NodeSeries {
    std::vector<std::pair<prometheus::Counter*, prometheus::Counter*>> counters;
    std::optional<std::chrono::steady_clock::time_point> absentSince;
  };
  std::mutex nodesMu_;
  std::map<std::string, NodeSeries> nodeSeries_;
  std::unique_ptr<OwnerEvictions> owners_;
  prometheus::Family<prometheus::Histogram>* loop_;
  prometheus::Family<prometheus::Histogram>* loopDeprecated_;
  prometheus::Family<prometheus::Histogram>* strategy_;
  prometheus::Family<prometheus::Histogram>* strategyDeprecated_;
  prometheus::Family<prometheus::Counter>* refused_;
  prometheus::Family<prometheus::Counter>* watchRestarts_;
  prometheus::Family<prometheus::Counter>* relists_;
  prometheus::Family<prometheus::Gauge>* cacheObjects_;
  prometheus::Family<prometheus::Gauge>* lastCycle_;
  prometheus::Family<prometheus::Counter>* triggerEvents_;
  prometheus::Family<prometheus::Counter>* triggerRuns_;
  prometheus::Family<prometheus::Histogram>* eventToEviction_;
  prometheus::Family<prometheus::Counter>* suppressed_;
  prometheus::Family<prometheus::Counter>* moves_;
  prometheus::Family<prometheus::Counter>* pendingHelped_;
  prometheus::Family<prometheus::Histogram>* moveReady_;
  prometheus::Family<prometheus::Gauge>* usageUp_;
  prometheus::Family<prometheus::Gauge>* usageLeftOut_;
  prometheus::Family<prometheus::Counter>* httpShed_;
  prometheus::Family<prometheus::Counter>* httpRejected_;
  prometheus::Family<prometheus::Gauge>* httpOpen_;
  prometheus::Family<prometheus::Gauge>* budgetRemaining_;
};

}  // namespace kdesched::metrics
