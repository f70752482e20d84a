#include "pkg/plugins/lownodeutilization/lownodeutilization.h"

#include <algorithm>
#include <optional>

#include "pkg/base/log.h"
#include "pkg/plugins/common/measured_usage.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::lownodeutilization {
namespace {

using nodeusage::NodeUsage;
using nodeusage::PerResource;

// Thresholds resolved for this run: static ones as configured, deviation ones around the mean.
struct Thresholds {
  PerResource<std::optional<double>> low;
  PerResource<std::optional<double>> high;
  // Deviation mode only, for the reason text: the mean and the configured deviation above it.
  PerResource<std::optional<double>> mean;
  PerResource<std::optional<double>> deviation;
};

std::optional<double> lookup(const policy::ResourceThresholds& t, const api::Symbol& r) {
  auto it = t.find(r.str());
  if (it == t.end()) return std::nullopt;
  return it->second;
}

double clampPercent(double v) { return std::min(std::max(v, 0.0), 100.0); }

Thresholds resolveThresholds(const Args& args, const std::vector<api::Symbol>& tracked,
                             const std::vector<NodeUsage>& nodes) {
  Thresholds t;
  t.low.resize(tracked.size());
  t.high.resize(tracked.size());
  t.mean.resize(tracked.size());
  t.deviation.resize(tracked.size());
  for (std::size_t k = 0; k < tracked.size(); ++k) {
    std::optional<double> low = lookup(args.thresholds, tracked[k]);
    std::optional<double> high = lookup(args.targetThresholds, tracked[k]);
    if (!low) continue;  // not a threshold resource: tracked for accounting only
    if (!args.useDeviationThresholds) {
      t.low[k] = low;
      t.high[k] = high;
      continue;
    }
    // Upstream averages over the nodes that have the resource at all; with none, the resource
    // gets no threshold and does not classify.
    double sum = 0;
    std::size_t count = 0;
    for (const NodeUsage& n : nodes) {
      // A saturated capacity gives an upper bound, not a percentage to average.
      if (n.percent[k] && !api::isSaturated(nodeusage::capacityOf(tracked[k], *n.node).value_or(0))) {
        sum += *n.percent[k];
        ++count;
      }
    }
    if (count == 0) continue;
    double mean = sum / static_cast<double>(count);
    t.mean[k] = mean;
    t.deviation[k] = high;
    t.low[k] = clampPercent(mean + -*low);
    t.high[k] = clampPercent(mean + *high);
  }
  return t;
}

bool isUnderutilized(const NodeUsage& n, const Thresholds& t) {
  return !n.node->unschedulable && nodeusage::atOrBelow(n, t.low);  // nothing can move to a cordoned node
}

// Upstream's continueEvictionCond: the node is still above its cap for some resource and every
// resource still has room on the underutilized nodes.
bool shouldContinue(const NodeUsage& n, const PerResource<std::int64_t>& available) {
  bool above = false;
  for (std::size_t k = 0; k < n.usage.size(); ++k)
    if (n.usage[k] > n.cap[k]) above = true;
  if (!above) return false;
  return std::all_of(available.begin(), available.end(), [](std::int64_t a) { return a > 0; });
}

// "cpu 80% > 50%, memory 50%, ...": the threshold (and, with deviations, the mean) named where
// the node is above it.
std::string describeSource(const std::vector<api::Symbol>& tracked, const NodeUsage& source, const Thresholds& t) {
  return nodeusage::describeUsage(tracked, nodeusage::percentages(tracked, *source.node, source.usage),
                                  [&](std::size_t k, double pct) {
                                    std::string out;
                                    if (!t.high[k] || pct <= *t.high[k]) return out;
                                    out = " > " + nodeusage::formatPercent(*t.high[k]) + "%";
                                    if (t.mean[k] && t.deviation[k])
                                      out += " (mean " + nodeusage::formatPercent(*t.mean[k]) + "% + " +
                                             nodeusage::formatPercent(*t.deviation[k]) + "%)";
                                    return out;
                                  });
}

}  // namespace

LowNodeUtilization::LowNodeUtilization(Args args, UsageChoice usage)
    : args_(std::move(args)), usage_(std::move(usage)) {
  // Args asking for usage with no source resolved (built without chooseUsage) never mean requests.
  if (args_.metricsUtilization && !usage_.source && !usage_.broken) usage_.broken = "metrics source is empty";
  if (args_.metricsUtilization && args_.metricsUtilization->source == "Prometheus") {
    // Upstream tracks only the threshold resource (MetricResource) with Prometheus.
    tracked_ = {usage::kMetricResource()};
    return;
  }
  tracked_ = {api::kCpu(), api::kMemory(), api::kPods()};
  // Extended resources follow in name order (std::map order), so reasons read the same each run.
  for (const auto& [name, percent] : args_.thresholds) {
    api::Symbol r(name);
    if (std::find(tracked_.begin(), tracked_.end(), r) == tracked_.end()) tracked_.push_back(r);
  }
}

std::optional<usage::Needs::Consumer> LowNodeUtilization::usageNeed() const {
  if (!usage_.source || usage_.broken) return std::nullopt;
  return usage::Needs::Consumer{"", "", *usage_.source, usage_.query};
}

Result<std::vector<NodeUsage>> LowNodeUtilization::measure(framework::Handle& h,
                                                           const usage::SourceReadings*& readings) const {
  return nodeusage::measureChosen(h, tracked_, usage_, kName, readings);
}

Status LowNodeUtilization::balance(framework::Handle& h) {
  const usage::SourceReadings* readings = nullptr;
  auto nodes = measure(h, readings);
  if (!nodes.isOk()) return nodes.status();
  return drain(h, *nodes, readings);
}

Status LowNodeUtilization::drain(framework::Handle& h, std::vector<NodeUsage>& nodes,
                                 const usage::SourceReadings* readings) const {
  const std::vector<api::Symbol>& tracked = tracked_;
  Thresholds t = resolveThresholds(args_, tracked, nodes);
  std::vector<NodeUsage*> under, over;
  for (NodeUsage& n : nodes) {
    if (isUnderutilized(n, t))
      under.push_back(&n);
    else if (nodeusage::above(n, nodeusage::withoutSaturatedCapacity(tracked, n, t.high)))
      over.push_back(&n);
  }
  log::debug("nodes classified", {{"plugin", kName},
                                  {"profile", h.profile()},
                                  {"underutilized", under.size()},
                                  {"overutilized", over.size()},
                                  {"nodes", nodes.size()}});

  const char* idle = nodeusage::idleReason(under.size(), nodes.size(), args_.numberOfNodes, over.empty(),
                                           "no node is above targetThresholds");
  nodeusage::skipNotSources(h, tracked, nodes, over, t.high,
                            nodeusage::idleDetail(idle, under.size(), over.size(), nodes.size(), args_.numberOfNodes),
                            "is not overutilized: no resource above targetThresholds");
  if (idle) {
    log::debug("nothing to do", {{"plugin", kName}, {"profile", h.profile()}, {"reason", idle}});
    return Status::ok();
  }

  nodeusage::setCaps(tracked, under, t.high);
  nodeusage::setCaps(tracked, over, t.high);
  // What the underutilized nodes can still take before reaching their own caps.
  PerResource<std::int64_t> available = nodeusage::roomBelowCaps(under, tracked.size());
  const std::string destinations = "; underutilized node" + std::string(under.size() == 1 ? "" : "s") + ": " +
                                   nodeusage::describeNodes(tracked, under);
  // By requests the reason reads as it always has; by usage it names who measured.
  const std::string measuredBy = readings ? " by " + nodeusage::originOf(*readings, usage_.query) + " usage" : "";
  nodeusage::Drain drain{
      .h = h,
      .tracked = tracked,
      .available = available,
      .taints = nodeusage::DestinationTaints(under),
      .excludedNamespaces = {args_.excludedNamespaces.begin(), args_.excludedNamespaces.end()},
      .evictionLimitNode = args_.evictionLimitNode,
      .removable = nullptr,
      .keepGoing = shouldContinue,
      .reason =
          [&](const NodeUsage& source) {
            return "node " + source.node->name + " is overutilized" + measuredBy + " (" +
                   describeSource(tracked, source, t) + ")" + destinations;
          },
      .podUsage = nullptr,
      .unaccounted = readings && readings->source == usage::Source::Prometheus,
  };
  if (readings && readings->source == usage::Source::KubernetesMetrics)
    drain.podUsage = [&](const api::Pod& pod) { return nodeusage::podUsage(tracked, *readings, pod); };
  drain.from(nodeusage::byUsageSum(tracked, over, /*ascending=*/false));
  return Status::ok();
}

framework::PluginRegistration registration() {
  return common::registrationOf<LowNodeUtilization>(
      kName, decodeArgs, [](const Args& args, const policy::RawArgs& raw, const framework::BuildContext& ctx) {
        return nodeusage::chooseUsage(args.metricsUtilization,
                                      {{"thresholds", &args.thresholds}, {"targetThresholds", &args.targetThresholds}},
                                      kName, ctx, raw.path);
      });
}

}  // namespace kdesched::plugins::lownodeutilization
