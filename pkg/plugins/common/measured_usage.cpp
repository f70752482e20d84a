#include "pkg/plugins/common/measured_usage.h"

#include <algorithm>
#include <cmath>

#include "pkg/base/log.h"

namespace kdesched::plugins::nodeusage {

// Upstream's collector keeps a node's last value for ever and reads a missing cpu or memory as 0:
// hence the narrower rule without kdeschedRules.
std::optional<std::string> sampleProblem(const usage::NodeSample* s, const usage::SourceReadings& readings,
                                         const usage::ClusterUsage& cluster, bool kdeschedRules) {
  if (!s) return "no sample";
  if (readings.source == usage::Source::Prometheus) {
    if (!s->score) return "no sample";
    if (!std::isfinite(*s->score)) return "sample is " + std::string(std::isnan(*s->score) ? "NaN" : "infinite");
  } else if (kdeschedRules && (!s->cpuMilli || !s->memoryBytes)) {
    return std::string("sample has no ") + (s->cpuMilli ? "memory" : "cpu");
  }
  const std::int64_t age = cluster.asOf - s->takenAt;
  if (kdeschedRules && age > cluster.maxSampleAgeSeconds)
    return "sample " + std::to_string(age) + " s old, more than " + std::to_string(cluster.maxSampleAgeSeconds) + " s";
  return std::nullopt;
}

namespace {

// The node's usage of resource k from its sample, in milli-units.
std::int64_t sampled(const api::Symbol& r, const usage::NodeSample& s) {
  if (r == api::kCpu()) return s.cpuMilli.value_or(0);
  if (r == api::kMemory()) return api::mulSaturating(s.memoryBytes.value_or(0), 1000);
  // Upstream: resource.NewQuantity(int64(value*100)), whole units; a huge score saturates.
  return api::mulSaturating(api::milliFromDouble(*s.score * 100), 1000);
}

bool reportable(const api::Symbol& r, usage::Source source) {
  if (r == api::kPods()) return source == usage::Source::KubernetesMetrics;
  if (source == usage::Source::Prometheus) return r == usage::kMetricResource();
  return r == api::kCpu() || r == api::kMemory();
}

}  // namespace

Result<Measured> measureByUsage(const framework::Handle& h, const std::vector<api::Symbol>& tracked,
                                const usage::SourceReadings& readings, const usage::ClusterUsage& cluster) {
  for (const api::Symbol& r : tracked)
    if (!reportable(r, readings.source))
      return Status::error("unable to find \"" + r.str() +
                           "\" resource for collected node metrics: " + originOf(readings, "") + " does not report it");
  Measured out;
  const bool leaveOut = h.state().compat().usageGapLeavesNodeOut;
  for (const api::Node* node : h.nodes()) {
    const usage::NodeSample* s = readings.node(node->nameSym);
    if (auto why = sampleProblem(s, readings, cluster, leaveOut)) {
      if (!leaveOut)  // upstream's sync fails on the first node it cannot find
        return Status::error(readings.source == usage::Source::Prometheus
                                 ? "unable to find metric entry for " + node->name
                                 : "unable to find node \"" + node->name + "\" in the collected metrics");
      out.leftOut.push_back(node->name + " (" + *why + ")");
      continue;
    }
    NodeUsage n;
    n.node = node;
    n.usage.resize(tracked.size());
    const std::vector<const api::Pod*> live = h.podsOnNode(*node);
    for (std::size_t k = 0; k < tracked.size(); ++k)
      n.usage[k] = tracked[k] == api::kPods() ? static_cast<std::int64_t>(live.size()) * 1000 : sampled(tracked[k], *s);
    // The sample still counts what was evicted earlier in this cycle; its own usage leaves with it.
    if (readings.source == usage::Source::KubernetesMetrics) {
      for (const api::Pod* p : h.snapshot().podsOnNode(node->nameSym)) {
        if (p->isTerminal() || !h.isEvicted(*p)) continue;
        if (auto gone = podUsage(tracked, readings, *p))
          for (std::size_t k = 0; k < tracked.size(); ++k)
            if (tracked[k] != api::kPods()) n.usage[k] = std::max<std::int64_t>(0, n.usage[k] - (*gone)[k]);
      }
    }
    n.percent = percentages(tracked, *node, n.usage);
    out.nodes.push_back(std::move(n));
  }
  return out;
}

std::optional<PerResource<std::int64_t>> podUsage(const std::vector<api::Symbol>& tracked,
                                                  const usage::SourceReadings& readings, const api::Pod& pod) {
  auto found = readings.pods.find(pod);
  if (!found) return std::nullopt;
  PerResource<std::int64_t> out(tracked.size(), 0);
  for (std::size_t k = 0; k < tracked.size(); ++k) {
    if (tracked[k] == api::kPods())
      out[k] = 1000;
    else if (tracked[k] == api::kCpu())
      out[k] = found->cpuMilli;
    else if (tracked[k] == api::kMemory())
      out[k] = api::mulSaturating(found->memoryBytes, 1000);
    else
      return std::nullopt;  // upstream: "container is missing <resource>"
  }
  return out;
}

std::string originOf(const usage::SourceReadings& readings, const std::string& query) {
  std::string origin = !readings.origin.empty()                       ? readings.origin
                       : readings.source == usage::Source::Prometheus ? "Prometheus"
                                                                      : "metrics-server";
  if (!query.empty()) origin += " query " + query;
  return origin;
}

namespace {

// The reading the plugin's source gave this cycle, or why there is none. Never a fallback to
// requests: without usage the plugin does nothing.
Result<const usage::SourceReadings*> readingsFor(const framework::Handle& h, const UsageChoice& choice) {
  const usage::ClusterUsage* all = h.usage();
  const usage::SourceReadings* r = nullptr;
  if (all)
    r = *choice.source == usage::Source::Prometheus ? all->prometheusFor(choice.query)
                                                    : (all->kubernetesMetrics ? &*all->kubernetesMetrics : nullptr);
  const std::string origin =
      *choice.source == usage::Source::Prometheus ? "Prometheus query " + choice.query : std::string("metrics-server");
  const char* tail = "; skipped this cycle, nothing is evicted on requests instead";
  if (!r) return Status::error("no usage from " + origin + " for this cycle" + tail);
  if (r->down) return Status::error(origin + " gave no usage this cycle (" + *r->down + ")" + tail);
  return r;
}

std::vector<NodeUsage> withoutSaturated(const framework::Handle& h, const std::vector<api::Symbol>& tracked,
                                        const std::string& plugin, std::vector<NodeUsage> nodes) {
  const std::vector<std::string> leftOut = leaveOutSaturated(h, tracked, nodes);
  if (!leftOut.empty()) {
    std::string names;
    for (const std::string& n : leftOut) names += (names.empty() ? "" : ", ") + n;
    log::debug("nodes left out of the classification: their usage is saturated, so unknown",
               {{"plugin", plugin}, {"profile", h.profile()}, {"nodes", names}});
  }
  return nodes;
}

std::string plural(std::size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

Result<std::vector<NodeUsage>> measureChosen(framework::Handle& h, const std::vector<api::Symbol>& tracked,
                                             const UsageChoice& choice, const std::string& plugin,
                                             const usage::SourceReadings*& readings) {
  readings = nullptr;
  // Broken first: a metricsUtilization without a usable source must never measure requests.
  if (choice.broken) return Status::error("error initializing usage client: " + *choice.broken);
  if (!choice.source) return withoutSaturated(h, tracked, plugin, measure(h, tracked));
  auto r = readingsFor(h, choice);
  if (!r.isOk()) return r.status();
  readings = *r;
  auto measured = measureByUsage(h, tracked, *readings, *h.usage());
  if (!measured.isOk()) return Status::error("error getting node usage: " + measured.error());
  const std::string origin = originOf(*readings, choice.query);
  if (measured->nodes.empty())
    return Status::error("no usable sample from " + origin + " for any of the " + plural(h.nodes().size(), "node") +
                         "; skipped this cycle, nothing is evicted on requests instead");
  if (!measured->leftOut.empty()) {
    std::string names;
    for (std::size_t i = 0; i < measured->leftOut.size() && i < 5; ++i) names += (i ? ", " : "") + measured->leftOut[i];
    if (measured->leftOut.size() > 5) names += " and " + std::to_string(measured->leftOut.size() - 5) + " more";
    log::warn("nodes left out of the classification: their usage sample is missing, not a number or stale",
              {{"plugin", plugin}, {"profile", h.profile()}, {"source", origin}, {"nodes", names}});
  }
  return withoutSaturated(h, tracked, plugin, std::move(measured->nodes));
}

}  // namespace kdesched::plugins::nodeusage
