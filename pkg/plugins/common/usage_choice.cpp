#include "pkg/plugins/common/usage_choice.h"

namespace kdesched::plugins::nodeusage {
namespace {

// "[cpu memory]", as Go prints the slice upstream's message holds (sorted here: Go's map order is
// random).
std::string resourceList(const policy::ResourceThresholds& t) {
  std::string out = "[";
  for (const auto& [name, percent] : t) out += (out.size() > 1 ? " " : "") + name;
  return out + "]";
}

Status onlyMetricResource(const policy::ResourceThresholds& t, const std::string& which, const std::string& path) {
  const std::string& metric = usage::kMetricResource().str();
  if (t.size() == 1 && t.begin()->first == metric) return Status::ok();
  return Status::error(path + "." + which + ": " + which + " are expected to specify a single instance of \"" + metric +
                       "\" resource, got " + resourceList(t) + " instead");
}

UsageChoice resolve(const MetricsUtilization& m, const usage::Providers& providers) {
  UsageChoice c;
  // Upstream's switch: metricsServer wins over any source.
  if (m.metricsServer || m.source == "KubernetesMetrics") {
    c.source = usage::Source::KubernetesMetrics;
    if (!providers.kubernetesMetrics) c.broken = "metrics client not initialized";
  } else if (m.source == "Prometheus") {
    c.source = usage::Source::Prometheus;
    c.query = m.prometheusQuery;
    if (!providers.prometheus) c.broken = "prometheus client not initialized";
  } else {
    c.broken = m.source.empty() ? "metrics source is empty" : "unrecognized metrics source";
  }
  return c;
}

std::string fix(const UsageChoice& c) {
  if (!c.source) return "set source: KubernetesMetrics or Prometheus";
  if (*c.source == usage::Source::KubernetesMetrics)
    return "add `metricsProviders: [{source: KubernetesMetrics}]` at the top level of the policy";
  return "add a metricsProviders entry with source: Prometheus and its prometheus.url";
}

}  // namespace

Result<UsageChoice> chooseUsage(const std::optional<MetricsUtilization>& metricsUtilization,
                                const ThresholdFields& thresholds, const std::string& plugin,
                                const framework::BuildContext& ctx, const std::string& argsPath) {
  if (!metricsUtilization) return UsageChoice{};
  const MetricsUtilization& m = *metricsUtilization;
  if (m.source == "Prometheus")
    for (const auto& [field, t] : thresholds) KD_TRY(onlyMetricResource(*t, field, argsPath));
  UsageChoice c = resolve(m, ctx.metricsProviders);
  const std::string at = argsPath + ".metricsUtilization";
  if (c.broken) {
    ctx.warn(at + ": " + *c.broken + " (" + fix(c) + "); " + plugin +
             " fails every cycle with \"error initializing usage client: " + *c.broken +
             "\" and evicts nothing, as upstream does");
    return c;
  }
  if (c.source == usage::Source::KubernetesMetrics && m.source == "Prometheus") {
    // metricsServer and source: Prometheus: upstream reads metrics-server, which has no MetricResource.
    ctx.warn(at + ": metricsServer reads metrics-server, which has no MetricResource score; " + plugin +
             " fails every cycle and evicts nothing, as upstream does (remove metricsServer)");
    return c;
  }
  if (c.source == usage::Source::KubernetesMetrics) {
    for (const auto& [name, percent] : *thresholds.front().second)
      if (name != "cpu" && name != "memory" && name != "pods")
        ctx.warn(argsPath + ".thresholds[\"" + name + "\"]: metrics-server reports cpu and memory only, so " + name +
                 " has no measured usage and " + plugin + " fails every cycle, as upstream does");
  }
  return c;
}

}  // namespace kdesched::plugins::nodeusage
