#include "pkg/plugins/common/node_usage.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <unordered_set>

#include "pkg/api/scheduling.h"
#include "pkg/framework/nodefit.h"
#include "pkg/usage/usage.h"

namespace kdesched::plugins::nodeusage {
namespace {

// Rounded up, as a Quantity's Value(); no overflow for a saturated amount (api::kSaturatedMilli).
std::int64_t wholeUnits(std::int64_t milli) {
  return milli >= 0 ? milli / 1000 + (milli % 1000 != 0 ? 1 : 0) : -((-milli) / 1000);
}

double percentOf(const api::Symbol& r, std::int64_t usedMilli, std::int64_t capacityMilli) {
  std::int64_t used = upstreamUnits(r, usedMilli);
  std::int64_t capacity = upstreamUnits(r, capacityMilli);
  // Same expression order as upstream, so float rounding at a boundary matches.
  return capacity > 0 ? static_cast<double>(used) / static_cast<double>(capacity) * 100 : 0.0;
}

// How many nodes a reason names before "and N more": keeps the line readable.
constexpr std::size_t kNamedNodes = 3;

}  // namespace

std::int64_t upstreamUnits(const api::Symbol& r, std::int64_t milli) {
  return r == api::kCpu() ? milli : wholeUnits(milli);
}

std::optional<std::int64_t> capacityOf(const api::Symbol& r, const api::Node& node) {
  if (node.allocatable.has(r)) return node.allocatable.get(r);
  if (r == usage::kMetricResource()) return 100 * 1000;
  return std::nullopt;
}

PerResource<std::optional<double>> percentages(const std::vector<api::Symbol>& tracked, const api::Node& node,
                                               const PerResource<std::int64_t>& usage) {
  PerResource<std::optional<double>> out(tracked.size());
  for (std::size_t k = 0; k < tracked.size(); ++k)
    if (auto capacity = capacityOf(tracked[k], node)) out[k] = percentOf(tracked[k], usage[k], *capacity);
  return out;
}

std::int64_t capAt(const api::Symbol& r, const api::Node& node, const std::optional<double>& threshold) {
  std::optional<std::int64_t> capacityMilli = capacityOf(r, node);
  if (!capacityMilli) return 0;
  std::int64_t capacity = *capacityMilli;
  if (!threshold) return capacity;
  std::int64_t units = upstreamUnits(r, capacity);
  // A saturated capacity times 100% rounds to 2^63 as a double: the conversions saturate.
  std::int64_t capped = api::milliFromDouble(*threshold * 0.01 * static_cast<double>(units));
  return r == api::kCpu() ? capped : api::mulSaturating(capped, 1000);
}

std::vector<NodeUsage> measure(const framework::Handle& h, const std::vector<api::Symbol>& tracked) {
  std::vector<NodeUsage> nodes;
  nodes.reserve(h.nodes().size());
  for (const api::Node* node : h.nodes()) {
    NodeUsage n;
    n.node = node;
    api::ResourceList requested = framework::nodeRequestedResources(h, *node);
    n.usage.resize(tracked.size());
    for (std::size_t k = 0; k < tracked.size(); ++k) n.usage[k] = requested.get(tracked[k]);
    n.percent = percentages(tracked, *node, n.usage);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

std::string saturatedUsageOf(const std::vector<api::Symbol>& tracked, const NodeUsage& n) {
  std::string out;
  for (std::size_t k = 0; k < tracked.size(); ++k)
    if (api::isSaturated(n.usage[k])) out += (out.empty() ? "" : ",") + tracked[k].str();
  return out;
}

PerResource<std::optional<double>> withoutSaturatedCapacity(const std::vector<api::Symbol>& tracked, const NodeUsage& n,
                                                            PerResource<std::optional<double>> thresholds) {
  for (std::size_t k = 0; k < tracked.size() && k < thresholds.size(); ++k)
    if (api::isSaturated(capacityOf(tracked[k], *n.node).value_or(0))) thresholds[k].reset();
  return thresholds;
}

namespace {

struct UnknownUsage {  // skip: every pod of a node whose usage sums past what kdesched represents
  const api::Node* node;
  const std::string* resources;
  std::string text() const {
    return "not a candidate: the usage of its node " + node->name + " is unknown: its " + *resources +
           " sums past what kdesched represents (a pod there requests a saturated amount)";
  }
};

// Skip: every pod of a node the plugin does not drain, said with the node's usage against the
// thresholds; or, when the plugin has nothing to do at all, why.
struct NotASource {
  const std::vector<api::Symbol>* tracked;
  const NodeUsage* node;
  const PerResource<std::optional<double>>* thresholds;
  const std::string* idle;
  std::string_view notSource;
  std::string text() const {
    const std::string usage = describeUsage(*tracked, node->percent, [this](std::size_t k, double) {
      return (*thresholds)[k] ? " vs " + formatPercent(*(*thresholds)[k]) + "%" : std::string();
    });
    return idle->empty()
               ? "not a candidate: its node " + node->node->name + " " + std::string(notSource) + " (" + usage + ")"
               : "nothing to do: " + *idle + " (its node " + node->node->name + ": " + usage + ")";
  }
};

}  // namespace

std::vector<std::string> leaveOutSaturated(const framework::Handle& h, const std::vector<api::Symbol>& tracked,
                                           std::vector<NodeUsage>& nodes) {
  std::vector<std::string> leftOut;
  std::erase_if(nodes, [&](const NodeUsage& n) {
    const std::string resources = saturatedUsageOf(tracked, n);
    if (resources.empty()) return false;
    leftOut.push_back(n.node->name + " (" + resources + ")");
    h.skipPodsOn(*n.node, UnknownUsage{n.node, &resources});
    return true;
  });
  return leftOut;
}

bool atOrBelow(const NodeUsage& n, const PerResource<std::optional<double>>& thresholds) {
  for (std::size_t k = 0; k < thresholds.size(); ++k)
    if (thresholds[k] && *thresholds[k] < n.percent[k].value_or(0)) return false;
  return true;
}

bool above(const NodeUsage& n, const PerResource<std::optional<double>>& thresholds) {
  for (std::size_t k = 0; k < thresholds.size(); ++k)
    if (thresholds[k] && *thresholds[k] < n.percent[k].value_or(0)) return true;
  return false;
}

void setCaps(const std::vector<api::Symbol>& tracked, const std::vector<NodeUsage*>& nodes,
             const PerResource<std::optional<double>>& thresholds) {
  for (NodeUsage* n : nodes) {
    n->cap.resize(tracked.size());
    for (std::size_t k = 0; k < tracked.size(); ++k) n->cap[k] = capAt(tracked[k], *n->node, thresholds[k]);
  }
}

PerResource<std::int64_t> roomBelowCaps(const std::vector<NodeUsage*>& nodes, std::size_t resources) {
  PerResource<std::int64_t> room(resources, 0);
  for (const NodeUsage* n : nodes)
    for (std::size_t k = 0; k < resources; ++k) room[k] = api::addSaturating(room[k], n->cap[k] - n->usage[k]);
  return room;
}

std::vector<NodeUsage*> byUsageSum(const std::vector<api::Symbol>& tracked, const std::vector<NodeUsage*>& nodes,
                                   bool ascending) {
  std::vector<std::pair<std::int64_t, NodeUsage*>> keyed;
  keyed.reserve(nodes.size());
  for (NodeUsage* n : nodes) {
    std::int64_t score = 0;
    for (std::size_t k = 0; k < tracked.size(); ++k)
      score = api::addSaturating(score, upstreamUnits(tracked[k], n->usage[k]));
    keyed.emplace_back(score, n);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [&](const auto& a, const auto& b) { return ascending ? a.first < b.first : a.first > b.first; });
  std::vector<NodeUsage*> out;
  out.reserve(keyed.size());
  for (const auto& entry : keyed) out.push_back(entry.second);
  return out;
}

std::string formatPercent(double percent) {
  double rounded = std::round(percent * 10) / 10;
  char buf[64];
  if (rounded == std::trunc(rounded))
    std::snprintf(buf, sizeof buf, "%.0f", rounded);
  else
    std::snprintf(buf, sizeof buf, "%.1f", rounded);
  return buf;
}

std::string describeUsage(const std::vector<api::Symbol>& tracked, const PerResource<std::optional<double>>& pct,
                          const std::function<std::string(std::size_t, double)>& annotate) {
  std::string out;
  for (std::size_t k = 0; k < tracked.size(); ++k) {
    if (!out.empty()) out += ", ";
    out += tracked[k].str() + " ";
    if (!pct[k]) {
      out += "n/a";
      continue;
    }
    out += formatPercent(*pct[k]) + "%";
    if (annotate) out += annotate(k, *pct[k]);
  }
  return out;
}

std::string describeNodes(const std::vector<api::Symbol>& tracked, const std::vector<NodeUsage*>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size() && i < kNamedNodes; ++i) {
    if (i) out += ", ";
    out += nodes[i]->node->name + " (" + describeUsage(tracked, nodes[i]->percent) + ")";
  }
  if (nodes.size() > kNamedNodes) out += " and " + std::to_string(nodes.size() - kNamedNodes) + " more";
  return out;
}

DestinationTaints::DestinationTaints(const std::vector<NodeUsage*>& destinations) {
  std::unordered_set<std::string> seen;
  for (const NodeUsage* d : destinations) {
    const auto& taints = d->node->taints;
    if (taints.empty()) {
      untainted_ = true;
      return;
    }
    std::string key;
    for (const auto& t : taints)
      key += t.key + '\x1f' + t.value + '\x1f' + std::string(api::toString(t.effect)) + '\x1e';
    if (seen.insert(key).second) sets_.push_back(&taints);
  }
}

bool DestinationTaints::toleratedBy(const api::Pod& pod) {
  if (untainted_) return true;
  const api::SchedulingConstraints* c = &pod.constraints();
  auto it = memo_.find(c);
  if (it != memo_.end()) return it->second;
  bool ok = std::any_of(sets_.begin(), sets_.end(), [&](const std::vector<api::Taint>* taints) {
    return c->tolerations.size() >= taints->size() && api::toleratesTaints(c->tolerations, *taints);
  });
  memo_.emplace(c, ok);
  return ok;
}

const char* idleReason(std::size_t under, std::size_t nodes, std::int64_t numberOfNodes, bool noPeers,
                       const char* noPeersWhy) {
  if (under == 0) return "no node is underutilized";
  if (static_cast<std::int64_t>(under) <= numberOfNodes)
    return "the number of underutilized nodes is not above numberOfNodes";
  if (under == nodes) return "all nodes are underutilized";
  return noPeers ? noPeersWhy : nullptr;
}

std::string idleDetail(const char* idle, std::size_t under, std::optional<std::size_t> over, std::size_t nodes,
                       std::int64_t numberOfNodes) {
  if (!idle) return {};
  std::string out = std::string(idle) + " (" + std::to_string(under) + " underutilized";
  if (over) out += ", " + std::to_string(*over) + " overutilized";
  return out + " of " + std::to_string(nodes) + " nodes; numberOfNodes " + std::to_string(numberOfNodes) + ")";
}

void skipNotSources(const framework::Handle& h, const std::vector<api::Symbol>& tracked,
                    const std::vector<NodeUsage>& nodes, const std::vector<NodeUsage*>& sources,
                    const PerResource<std::optional<double>>& thresholds, const std::string& idle,
                    std::string_view notSource) {
  const std::unordered_set<const NodeUsage*> drained =
      idle.empty() ? std::unordered_set<const NodeUsage*>(sources.begin(), sources.end())
                   : std::unordered_set<const NodeUsage*>();
  for (const NodeUsage& n : nodes)
    if (!drained.count(&n)) h.skipPodsOn(*n.node, NotASource{&tracked, &n, &thresholds, &idle, notSource});
}

void Drain::from(const std::vector<NodeUsage*>& sources) {
  for (NodeUsage* source : sources)
    if (!fromNode(*source)) return;
}

// The candidates after `last` (or from `last` on, when it was not evicted) that the loop stops before.
void Drain::skipRest(const std::vector<const api::Pod*>& candidates, const api::Pod* from,
                     const std::string& why) const {
  auto it = std::find(candidates.begin(), candidates.end(), from);
  if (it != candidates.end() && h.isEvicted(**it)) ++it;
  h.skipEach(std::span(it, candidates.end()), "stopped before it: " + why);
}

bool Drain::fromNode(NodeUsage& source) {
  std::vector<const api::Pod*> candidates;
  for (const api::Pod* p : h.podsOnNode(*source.node)) {
    if (!h.filter(*p).ok) continue;
    if (removable && !removable(*p)) {
      h.skip(*p, "not removable: the pod requests none of the threshold resources (onlyThresholdingResources)");
      continue;
    }
    candidates.push_back(p);
  }
  if (candidates.empty()) return true;
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const api::Pod* a, const api::Pod* b) { return api::podLessByPriorityLowToHigh(*a, *b); });

  if (!keepGoing(source, available)) {
    h.skipEach(candidates,
               "no room: the destination nodes have no room left below their caps, or the node is no longer above "
               "them");
    return true;
  }
  std::uint32_t evicted = 0;
  for (const api::Pod* pod : candidates) {
    if (evictionLimitNode && evicted >= *evictionLimitNode) {
      skipRest(candidates, pod,
               "a limit: evictionLimitNode (" + std::to_string(*evictionLimitNode) + ") reached on node " +
                   source.node->name);
      break;
    }
    if (!taints.toleratedBy(*pod)) {
      h.skip(*pod, "not movable: the pod tolerates the taints of none of the destination nodes");
      continue;
    }
    if (excludedNamespaces.count(pod->ns.view())) {
      h.skip(*pod, "excluded namespace: the pod's namespace is in evictableNamespaces.exclude");
      continue;
    }
    std::optional<PerResource<std::int64_t>> moved;
    if (podUsage && !unaccounted) {
      moved = podUsage(*pod);
      if (!moved) {  // upstream: "unable to get pod usage", the pod stays
        h.skip(*pod, "no usage: the metrics source has no usage for the pod");
        continue;
      }
    }
    // PreEvictionFilter (nodeFit, namespaceLabelSelector) runs in the eviction chain, which
    // records a refusal; upstream's skip-and-continue is the same decision.
    framework::EvictResult res = h.evict(*pod, reason(source));
    if (!res.evicted) {
      if (res.stopsPlugin()) return false;
      if (res.refusal == framework::Refusal::NodeLimit) break;
      continue;
    }
    if (unaccounted && !evictionLimitNode) {
      skipRest(candidates, pod, "one pod per node and cycle: a Prometheus score has no per-pod usage");
      break;
    }
    ++evicted;
    if (unaccounted) continue;
    for (std::size_t k = 0; k < tracked.size(); ++k) {
      std::int64_t amount = moved ? (*moved)[k] : tracked[k] == api::kPods() ? 1000 : pod->requests.get(tracked[k]);
      source.usage[k] -= amount;
      available[k] -= amount;
    }
    if (!keepGoing(source, available)) {
      skipRest(candidates, pod,
               "enough: after the evictions before it node " + source.node->name +
                   " is no longer above its caps, or the destinations are full");
      break;
    }
  }
  return true;
}

}  // namespace kdesched::plugins::nodeusage
