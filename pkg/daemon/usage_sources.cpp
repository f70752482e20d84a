#include "pkg/daemon/usage_sources.h"

#include <algorithm>
#include <unordered_set>

#include "pkg/base/log.h"
#include "pkg/plugins/common/measured_usage.h"

namespace kdesched::daemon {

UsageSources::UsageSources(usage::Needs needs, std::unique_ptr<Health> health,
                           std::unique_ptr<MetricsServerCollector> metricsServer,
                           std::unique_ptr<PrometheusSource> prometheus, metrics::Metrics* metrics, bool kdeschedRules)
    : needs_(std::move(needs)),
      health_(std::move(health)),
      metricsServer_(std::move(metricsServer)),
      prometheus_(std::move(prometheus)),
      metrics_(metrics),
      kdeschedRules_(kdeschedRules) {}

bool UsageSources::wanted(const framework::CycleScope& scope) const {
  if (needs_.empty() || !scope.runBalance) return false;
  if (scope.plugins.empty()) return true;
  return std::any_of(needs_.consumers.begin(), needs_.consumers.end(), [&](const usage::Needs::Consumer& c) {
    return std::find(scope.plugins.begin(), scope.plugins.end(), c.plugin) != scope.plugins.end();
  });
}

usage::ClusterUsage UsageSources::measure(api::Timestamp asOf, Cancellation* cancel) {
  usage::ClusterUsage out;
  out.asOf = asOf;
  if (needs_.kubernetesMetrics()) {
    if (metricsServer_) {
      // Every consumer of metrics-server today (LowNodeUtilization) reads the pods' usage too.
      out.kubernetesMetrics = metricsServer_->readings(true, cancel);
      // What decoding set aside (a pod whose containers lack a number: it will not be moved).
      for (const std::string& note : out.kubernetesMetrics->notes)
        log::debug("usage note", {{"source", "KubernetesMetrics"}, {"note", note}});
    } else {
      out.kubernetesMetrics.emplace();
      out.kubernetesMetrics->origin = "metrics-server";
      out.kubernetesMetrics->down = "no metrics collector runs";
    }
  }
  for (const std::string& query : needs_.prometheusQueries()) {
    if (prometheus_) {
      const usage::SourceReadings& r =
          out.prometheus.emplace(query, prometheus_->query(query, asOf, cancel)).first->second;
      for (const std::string& note : r.notes) log::debug("usage note", {{"source", "Prometheus"}, {"note", note}});
      continue;
    }
    usage::SourceReadings r;
    r.source = usage::Source::Prometheus;
    r.origin = "Prometheus";
    r.down = prometheusUnusable_.empty() ? "no Prometheus provider in metricsProviders"
                                         : "the Prometheus provider cannot be used: " + prometheusUnusable_;
    out.prometheus.emplace(query, std::move(r));
  }
  return out;
}

std::pair<std::size_t, std::size_t> UsageSources::countLeftOut(const usage::ClusterUsage& usage,
                                                               const std::vector<const api::Node*>& nodes) {
  auto unusable = [&](const usage::SourceReadings& r, const api::Node& n) {
    return plugins::nodeusage::sampleProblem(r.node(n.nameSym), r, usage, kdeschedRules_).has_value();
  };
  std::size_t byMetricsServer = 0, byPrometheus = 0;
  if (usage.kubernetesMetrics && !usage.kubernetesMetrics->down)
    for (const api::Node* n : nodes) byMetricsServer += unusable(*usage.kubernetesMetrics, *n);
  // With several queries, a node counts once when any query that answered cannot be used for it.
  for (const api::Node* n : nodes)
    byPrometheus += std::any_of(usage.prometheus.begin(), usage.prometheus.end(),
                                [&](const auto& q) { return !q.second.down && unusable(q.second, *n); });
  if (metrics_) {
    if (usage.kubernetesMetrics) metrics_->usageNodesLeftOut("KubernetesMetrics", static_cast<double>(byMetricsServer));
    if (!usage.prometheus.empty()) metrics_->usageNodesLeftOut("Prometheus", static_cast<double>(byPrometheus));
  }
  return {byMetricsServer, byPrometheus};
}

bool UsageSources::start(Cancellation& stop, Clock::Duration wait) {
  if (!metricsServer_) return !stop.cancelled();
  metricsServer_->start(stop);
  const double seconds = std::chrono::duration<double>(wait).count();
  log::info("waiting for the metrics collector's first collection", {{"timeout_seconds", seconds}});
  if (metricsServer_->waitForFirst(wait, stop)) return true;
  if (stop.cancelled()) return false;
  // Why: the last LIST's error, or that metrics-server listed none of the cluster's nodes.
  const std::optional<std::string> why = metricsServer_->readings(false).down;
  log::warn(
      "no NodeMetrics collected in time; cycles start anyway and balancing by metrics-server usage skips "
      "until a collection succeeds",
      {{"timeout_seconds", seconds}, {"why", why.value_or("")}, {"hint", "upstream fails its start here"}});
  return true;
}

void UsageSources::stop() {
  if (metricsServer_) metricsServer_->stop();
}

Result<std::unique_ptr<UsageSources>> makeUsageSources(const engine::Engine& engine, kube::Client& client,
                                                       cluster::Store& store, std::shared_ptr<Clock> clock,
                                                       metrics::Metrics* metrics, const PrometheusEnvironment& env) {
  usage::Needs needs = engine.usageNeeds();
  if (needs.empty()) return std::unique_ptr<UsageSources>();
  auto health = std::make_unique<UsageSources::Health>(metrics);
  std::unique_ptr<MetricsServerCollector> collector;
  if (needs.kubernetesMetrics())
    collector = std::make_unique<MetricsServerCollector>(
        client, clock, [&store](const std::string& node) { return store.hasNode(node); }, health->kubernetesMetrics);
  std::unique_ptr<PrometheusSource> prometheus;
  std::string prometheusUnusable;
  if (!needs.prometheusQueries().empty()) {
    if (const policy::PrometheusProvider* p = engine.policy.prometheusProvider()) {
      auto made = makePrometheusSource(*p, client, clock, env, health->prometheus);
      if (made.isOk()) {
        prometheus = std::move(made.value());
      } else {
        // Upstream starts with such a URL and fails every query: the other plugins keep working.
        // So does kdesched; the source is down for good and says why at every cycle.
        health->prometheus.report("client", made.error());
        prometheusUnusable = made.error();
      }
    }
  }
  auto sources =
      std::make_unique<UsageSources>(std::move(needs), std::move(health), std::move(collector), std::move(prometheus),
                                     metrics, engine.extension.compat.usageGapLeavesNodeOut);
  sources->prometheusUnusable_ = std::move(prometheusUnusable);
  return sources;
}

}  // namespace kdesched::daemon
