// The measured usage a live cycle runs with: what the policy's usage plugins need (engine
// usageNeeds()), from the sources that serve it, measured at the cycle's start. Built only when a
// plugin balances by usage; a source that gives nothing is handed over `down`, and the plugin
// skips: nothing here ever falls back to requests.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "pkg/cluster/store.h"
#include "pkg/daemon/metrics_server_collector.h"
#include "pkg/daemon/prometheus_source.h"
#include "pkg/daemon/source_health.h"
#include "pkg/engine/engine.h"
#include "pkg/framework/cycle.h"
#include "pkg/metrics/metrics.h"

namespace kdesched::daemon {

class UsageSources {
 public:
  // Bounded wait for the collector's first collection before the first cycle (upstream waits a
  // minute, then fails the start).
  static constexpr std::chrono::seconds kFirstCollectionWait{60};

  // The health trackers the sources report to.
  struct Health {
    SourceHealth kubernetesMetrics;
    SourceHealth prometheus;
    explicit Health(metrics::Metrics* m)
        : kubernetesMetrics("KubernetesMetrics", "metrics-server", m), prometheus("Prometheus", "Prometheus", m) {}
  };

  // `kdeschedRules`: the compat switch usageGapLeavesNodeOut, for counting the nodes left out as
  // the plugins do. A source the needs call for but that is null gives a `down` reading.
  UsageSources(usage::Needs needs, std::unique_ptr<Health> health,
               std::unique_ptr<MetricsServerCollector> metricsServer, std::unique_ptr<PrometheusSource> prometheus,
               metrics::Metrics* metrics, bool kdeschedRules);

  const usage::Needs& needs() const { return needs_; }
  MetricsServerCollector* metricsServer() { return metricsServer_.get(); }

  // Whether a run over `scope` has a plugin that balances by usage.
  bool wanted(const framework::CycleScope& scope) const;

  // The usage of one cycle that starts at `asOf` (Unix seconds): the collector's averages and one
  // PodMetrics LIST, one query per distinct Prometheus query.
  usage::ClusterUsage measure(api::Timestamp asOf, Cancellation* cancel = nullptr);

  // Sets kdesched_usage_nodes_left_out per source: the cycle's nodes whose sample the plugins will
  // not use (missing, stale, not a number). A source that is down counts none (its up metric says
  // it). Returns the count per source, KubernetesMetrics then Prometheus.
  std::pair<std::size_t, std::size_t> countLeftOut(const usage::ClusterUsage& usage,
                                                   const std::vector<const api::Node*>& nodes);

  // Starts the collector (when one is needed) and waits for its first collection, bounded: the
  // first cycle then has averages. Logs what it waits for and how it ended. False: stopped.
  bool start(Cancellation& stop, Clock::Duration wait = kFirstCollectionWait);
  void stop();

 private:
  usage::Needs needs_;
  std::unique_ptr<Health> health_;
  std::unique_ptr<MetricsServerCollector> metricsServer_;
  std::unique_ptr<PrometheusSource> prometheus_;
  metrics::Metrics* metrics_;
  bool kdeschedRules_;
  // Why the configured Prometheus provider has no client (a URL kdesched cannot use): its queries
  // read as down with this reason.
  std::string prometheusUnusable_;
  friend Result<std::unique_ptr<UsageSources>> makeUsageSources(const engine::Engine&, kube::Client&, cluster::Store&,
                                                                std::shared_ptr<Clock>, metrics::Metrics*,
                                                                const PrometheusEnvironment&);
};

// The sources the engine's plugins need, or null when none balances by usage. A Prometheus URL
// kdesched cannot use (not http or https, a query part, no host) is not an error, as for upstream,
// whose client fails each query: that source is down, kdesched_usage_source_up{source="Prometheus"}
// 0 and one warning, and the plugins that balance by it skip every cycle; the others run.
Result<std::unique_ptr<UsageSources>> makeUsageSources(const engine::Engine& engine, kube::Client& client,
                                                       cluster::Store& store, std::shared_ptr<Clock> clock,
                                                       metrics::Metrics* metrics, const PrometheusEnvironment& env);

}  // namespace kdesched::daemon
