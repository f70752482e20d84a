#include "pkg/plugins/highnodeutilization/highnodeutilization.h"

#include <algorithm>

#include "pkg/base/log.h"
#include "pkg/plugins/common/measured_usage.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::highnodeutilization {
namespace {

using nodeusage::NodeUsage;
using nodeusage::PerResource;

// Upstream's continueEvictionCond for this plugin: no per-node stop, only room left for every
// tracked resource on the destination nodes, so a source node is drained of every pod that can go.
bool roomLeft(const NodeUsage&, const PerResource<std::int64_t>& available) {
  return std::all_of(available.begin(), available.end(), [](std::int64_t a) { return a > 0; });
}

}  // namespace

HighNodeUtilization::HighNodeUtilization(Args args, nodeusage::UsageChoice usage)
    : args_(std::move(args)), usage_(std::move(usage)) {
  // Args asking for usage with no source resolved (built without chooseUsage) never mean requests.
  if (args_.metricsUtilization && !usage_.source && !usage_.broken) usage_.broken = "metrics source is empty";
  if (args_.metricsUtilization && args_.metricsUtilization->source == "Prometheus") {
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

std::optional<usage::Needs::Consumer> HighNodeUtilization::usageNeed() const {
  if (!usage_.source || usage_.broken) return std::nullopt;
  return usage::Needs::Consumer{"", "", *usage_.source, usage_.query};
}

Status HighNodeUtilization::balance(framework::Handle& h) {
  const std::vector<api::Symbol>& tracked = tracked_;
  // The threshold of each tracked resource, and upstream's internal high threshold: 100% of each
  // threshold resource (full capacity for the others).
  PerResource<std::optional<double>> low(tracked.size()), high(tracked.size());
  for (std::size_t k = 0; k < tracked.size(); ++k) {
    auto it = args_.thresholds.find(tracked[k].str());
    if (it == args_.thresholds.end()) continue;
    low[k] = it->second;
    high[k] = 100.0;
  }
  const usage::SourceReadings* readings = nullptr;
  auto measured = nodeusage::measureChosen(h, tracked, usage_, kName, readings);
  if (!measured.isOk()) return measured.status();
  std::vector<NodeUsage>& nodes = *measured;
  // Upstream does not ask whether an underutilized node is schedulable: a cordoned one is drained
  // too. The destinations are the other nodes that are schedulable.
  std::vector<NodeUsage*> under, destinations;
  for (NodeUsage& n : nodes) {
    if (nodeusage::atOrBelow(n, low))
      under.push_back(&n);
    else if (!n.node->unschedulable)
      destinations.push_back(&n);
  }
  log::debug("nodes classified", {{"plugin", kName},
                                  {"profile", h.profile()},
                                  {"underutilized", under.size()},
                                  {"destinations", destinations.size()},
                                  {"nodes", nodes.size()}});

  const char* idle = nodeusage::idleReason(under.size(), nodes.size(), args_.numberOfNodes, destinations.empty(),
                                           "no other node is schedulable");
  nodeusage::skipNotSources(h, tracked, nodes, under, low,
                            nodeusage::idleDetail(idle, under.size(), std::nullopt, nodes.size(), args_.numberOfNodes),
                            "is not underutilized: some resource above thresholds");
  if (idle) {
    log::debug("nothing to do", {{"plugin", kName}, {"profile", h.profile()}, {"reason", idle}});
    return Status::ok();
  }

  nodeusage::setCaps(tracked, destinations, high);
  PerResource<std::int64_t> available = nodeusage::roomBelowCaps(destinations, tracked.size());
  const std::string toward = "; its pods can pack onto node" + std::string(destinations.size() == 1 ? "" : "s") + " " +
                             nodeusage::describeNodes(tracked, destinations);
  auto atOrBelowText = [&](std::size_t k, double) {
    return low[k] ? " <= " + nodeusage::formatPercent(*low[k]) + "%" : std::string();
  };
  // By requests the reason reads as it always has; by usage it names who measured.
  const std::string measuredBy = readings ? " by " + nodeusage::originOf(*readings, usage_.query) + " usage" : "";
  std::vector<api::Symbol> thresholdResources;
  for (std::size_t k = 0; k < tracked.size(); ++k)
    if (low[k]) thresholdResources.push_back(tracked[k]);

  nodeusage::Drain drain{
      .h = h,
      .tracked = tracked,
      .available = available,
      .taints = nodeusage::DestinationTaints(destinations),
      .excludedNamespaces = {args_.excludedNamespaces.begin(), args_.excludedNamespaces.end()},
      .evictionLimitNode = std::nullopt,
      .removable = nullptr,
      .keepGoing = roomLeft,
      // The usage as classified: the reason explains why the node is being emptied.
      .reason =
          [&](const NodeUsage& source) {
            return "node " + source.node->name + " is underutilized" + measuredBy + " (" +
                   nodeusage::describeUsage(tracked, source.percent, atOrBelowText) + ")" + toward;
          },
      .podUsage = nullptr,  // requests
      // A Prometheus score has no per-pod usage: one pod per node and cycle, as LowNodeUtilization.
      .unaccounted = readings && readings->source == usage::Source::Prometheus,
  };
  if (readings && readings->source == usage::Source::KubernetesMetrics)
    drain.podUsage = [&](const api::Pod& pod) { return nodeusage::podUsage(tracked, *readings, pod); };
  if (args_.onlyThresholdingResources) {
    // Upstream asks whether some container declares a request for the resource; a pod's
    // requests hold exactly the resources its containers (and overhead) declare.
    drain.removable = [&](const api::Pod& pod) {
      return std::any_of(thresholdResources.begin(), thresholdResources.end(),
                         [&](const api::Symbol& r) { return r != api::kPods() && pod.requests.has(r); });
    };
  }
  drain.from(nodeusage::byUsageSum(tracked, under, /*ascending=*/true));
  return Status::ok();
}

framework::PluginRegistration registration() {
  return common::registrationOf<HighNodeUtilization>(
      kName, decodeArgs, [](const Args& args, const policy::RawArgs& raw, const framework::BuildContext& ctx) {
        return nodeusage::chooseUsage(args.metricsUtilization, {{"thresholds", &args.thresholds}}, kName, ctx,
                                      raw.path);
      });
}

}  // namespace kdesched::plugins::highnodeutilization
