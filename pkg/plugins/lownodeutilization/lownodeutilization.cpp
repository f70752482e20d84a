#include "pkg/plugins/lownodeutilization/lownodeutilization.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pkg/api/scheduling.h"
#include "pkg/base/log.h"
#include "pkg/framework/nodefit.h"

namespace kdesched::plugins::lownodeutilization {
namespace {

// One value per tracked resource, in trackedResources() order.
template <typename T>
using PerResource = std::vector<T>;

// Quantity.Value(): whole units, rounded up. Upstream measures every resource but cpu in whole
// units, so percentages and caps must be computed on those, not on our milli-units.
std::int64_t wholeUnits(std::int64_t milli) { return milli >= 0 ? (milli + 999) / 1000 : -((-milli) / 1000); }

// The unit upstream counts a resource in: millicores for cpu, whole units for the rest.
std::int64_t upstreamUnits(const api::Symbol& r, std::int64_t milli) {
  return r == api::kCpu() ? milli : wholeUnits(milli);
}

struct NodeInfo {
  const api::Node* node = nullptr;
  PerResource<std::int64_t> usage;             // requests of live pods, milli; pods = count × 1000
  PerResource<std::optional<double>> percent;  // unset when the node has no such resource
  PerResource<std::int64_t> cap;               // capacity at the high threshold, milli
};

// Thresholds resolved for this run: static ones as configured, deviation ones around the mean.
struct Thresholds {
  PerResource<std::optional<double>> low;
  PerResource<std::optional<double>> high;
  // Deviation mode only, for the reason text: the mean and the configured deviation above it.
  PerResource<std::optional<double>> mean;
  PerResource<std::optional<double>> deviation;
};

double percentOf(const api::Symbol& r, std::int64_t usedMilli, std::int64_t capacityMilli) {
  std::int64_t used = upstreamUnits(r, usedMilli);
  std::int64_t capacity = upstreamUnits(r, capacityMilli);
  // Same expression order as upstream, so float rounding at a boundary matches.
  return capacity > 0 ? static_cast<double>(used) / static_cast<double>(capacity) * 100 : 0.0;
}

PerResource<std::optional<double>> percentages(const std::vector<api::Symbol>& tracked, const api::Node& node,
                                               const PerResource<std::int64_t>& usage) {
  PerResource<std::optional<double>> out(tracked.size());
  for (std::size_t k = 0; k < tracked.size(); ++k)
    if (node.allocatable.has(tracked[k])) out[k] = percentOf(tracked[k], usage[k], node.allocatable.get(tracked[k]));
  return out;
}

// upstream's capNodeCapacityToThreshold: 0 when the node lacks the resource, full capacity
// without a threshold, else int64(threshold × 0.01 × capacity) in upstream's unit.
std::int64_t capAt(const api::Symbol& r, const api::Node& node, const std::optional<double>& threshold) {
  if (!node.allocatable.has(r)) return 0;
  std::int64_t capacity = node.allocatable.get(r);
  if (!threshold) return capacity;
  std::int64_t units = upstreamUnits(r, capacity);
  auto capped = static_cast<std::int64_t>(*threshold * 0.01 * static_cast<double>(units));
  return r == api::kCpu() ? capped : capped * 1000;
}

std::optional<double> lookup(const policy::ResourceThresholds& t, const api::Symbol& r) {
  auto it = t.find(r.str());
  if (it == t.end()) return std::nullopt;
  return it->second;
}

double clampPercent(double v) { return std::min(std::max(v, 0.0), 100.0); }

Thresholds resolveThresholds(const Args& args, const std::vector<api::Symbol>& tracked,
                             const std::vector<NodeInfo>& nodes) {
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
    for (const NodeInfo& n : nodes) {
      if (n.percent[k]) {
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

bool isUnderutilized(const NodeInfo& n, const Thresholds& t) {
  if (n.node->unschedulable) return false;  // nothing can move there
  for (std::size_t k = 0; k < t.low.size(); ++k)
    if (t.low[k] && *t.low[k] < n.percent[k].value_or(0)) return false;
  return true;
}

bool isOverutilized(const NodeInfo& n, const Thresholds& t) {
  for (std::size_t k = 0; k < t.high.size(); ++k)
    if (t.high[k] && *t.high[k] < n.percent[k].value_or(0)) return true;
  return false;
}

// Upstream's continueEvictionCond: the node is still above its cap for some resource and every
// resource still has room on the underutilized nodes.
bool shouldContinue(const NodeInfo& n, const PerResource<std::int64_t>& available) {
  bool above = false;
  for (std::size_t k = 0; k < n.usage.size(); ++k)
    if (n.usage[k] > n.cap[k]) above = true;
  if (!above) return false;
  return std::all_of(available.begin(), available.end(), [](std::int64_t a) { return a > 0; });
}

// Upstream's PodToleratesTaints against the underutilized nodes: the pod tolerates every taint
// (any effect) of at least one of them, trying a node only when the pod has at least as many
// tolerations as the node has taints. Identical taint sets are checked once, and the answer is
// memoized per shared constraints block (pods of one ReplicaSet share their tolerations).
class DestinationTaints {
 public:
  explicit DestinationTaints(const std::vector<const NodeInfo*>& destinations) {
    std::unordered_set<std::string> seen;
    for (const NodeInfo* d : destinations) {
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

  bool toleratedBy(const api::Pod& pod) {
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

 private:
  bool untainted_ = false;
  std::vector<const std::vector<api::Taint>*> sets_;
  std::unordered_map<const api::SchedulingConstraints*, bool> memo_;
};

// How many underutilized nodes a reason names before "and N more": keeps the line readable.
constexpr std::size_t kNamedDestinations = 3;

std::string describeUsage(const std::vector<api::Symbol>& tracked, const PerResource<std::optional<double>>& pct,
                          const Thresholds* t) {
  std::string out;
  for (std::size_t k = 0; k < tracked.size(); ++k) {
    if (!out.empty()) out += ", ";
    out += tracked[k].str() + " ";
    if (!pct[k]) {
      out += "n/a";
      continue;
    }
    out += formatPercent(*pct[k]) + "%";
    if (t && t->high[k] && *pct[k] > *t->high[k]) {
      out += " > " + formatPercent(*t->high[k]) + "%";
      if (t->mean[k] && t->deviation[k])
        out += " (mean " + formatPercent(*t->mean[k]) + "% + " + formatPercent(*t->deviation[k]) + "%)";
    }
  }
  return out;
}

std::string describeDestinations(const std::vector<api::Symbol>& tracked, const std::vector<const NodeInfo*>& under) {
  std::string out = "; underutilized node" + std::string(under.size() == 1 ? "" : "s") + ": ";
  for (std::size_t i = 0; i < under.size() && i < kNamedDestinations; ++i) {
    if (i) out += ", ";
    out += under[i]->node->name + " (" + describeUsage(tracked, under[i]->percent, nullptr) + ")";
  }
  if (under.size() > kNamedDestinations) out += " and " + std::to_string(under.size() - kNamedDestinations) + " more";
  return out;
}

// Usage snapshot of every node. nodeRequestedResources sums the live pods (pods evicted earlier in
// this cycle are gone) and shares its per-cycle cache with NodeFit.
std::vector<NodeInfo> measure(const framework::Handle& h, const std::vector<api::Symbol>& tracked) {
  std::vector<NodeInfo> nodes;
  nodes.reserve(h.nodes().size());
  for (const api::Node* node : h.nodes()) {
    NodeInfo n;
    n.node = node;
    api::ResourceList requested = framework::nodeRequestedResources(h, *node);
    n.usage.resize(tracked.size());
    for (std::size_t k = 0; k < tracked.size(); ++k) n.usage[k] = requested.get(tracked[k]);
    n.percent = percentages(tracked, *node, n.usage);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

// Busiest first by upstream's unweighted sum of raw numbers (memory bytes dominate). Upstream's
// sort is unstable over a map; ties keep node-name order here so plans are reproducible.
std::vector<NodeInfo*> busiestFirst(const std::vector<api::Symbol>& tracked, const std::vector<NodeInfo*>& over) {
  std::vector<std::pair<std::int64_t, NodeInfo*>> sources;
  sources.reserve(over.size());
  for (NodeInfo* n : over) {
    std::int64_t score = 0;
    for (std::size_t k = 0; k < tracked.size(); ++k) score += upstreamUnits(tracked[k], n->usage[k]);
    sources.emplace_back(score, n);
  }
  std::stable_sort(sources.begin(), sources.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<NodeInfo*> out;
  out.reserve(sources.size());
  for (const auto& entry : sources) out.push_back(entry.second);
  return out;
}

// Evicting from the overutilized nodes toward the underutilized ones, whose room is `available`.
struct Drain {
  framework::Handle& h;
  const Args& args;
  const std::vector<api::Symbol>& tracked;
  const Thresholds& t;
  PerResource<std::int64_t>& available;
  DestinationTaints taints;
  std::string destinationText;
  std::unordered_set<std::string_view> excluded;

  // Evicts from `source`, lowest priority first, while upstream's continue condition holds.
  // False when the total limit ends the plugin.
  bool from(NodeInfo& source) {
    std::vector<const api::Pod*> removable;
    for (const api::Pod* p : h.podsOnNode(*source.node))
      if (h.filter(*p).ok) removable.push_back(p);
    if (removable.empty()) return true;
    std::stable_sort(removable.begin(), removable.end(),
                     [](const api::Pod* a, const api::Pod* b) { return api::podLessByPriorityLowToHigh(*a, *b); });

    if (!shouldContinue(source, available)) return true;
    std::uint32_t evicted = 0;
    for (const api::Pod* pod : removable) {
      if (args.evictionLimitNode && evicted >= *args.evictionLimitNode) break;
      if (!taints.toleratedBy(*pod)) continue;
      if (excluded.count(pod->ns.view())) continue;
      // PreEvictionFilter (nodeFit, namespaceLabelSelector) runs in the eviction chain, which
      // records a refusal; upstream's skip-and-continue is the same decision.
      std::string reason = "node " + source.node->name + " is overutilized (" +
                           describeUsage(tracked, percentages(tracked, *source.node, source.usage), &t) + ")" +
                           destinationText;
      framework::EvictResult res = h.evict(*pod, reason);
      if (!res.evicted) {
        if (res.refusal == framework::Refusal::TotalLimit) return false;
        if (res.refusal == framework::Refusal::NodeLimit) break;
        continue;
      }
      ++evicted;
      for (std::size_t k = 0; k < tracked.size(); ++k) {
        std::int64_t moved = tracked[k] == api::kPods() ? 1000 : pod->requests.get(tracked[k]);
        source.usage[k] -= moved;
        available[k] -= moved;
      }
      if (!shouldContinue(source, available)) break;
    }
    return true;
  }
};

}  // namespace

std::string formatPercent(double percent) {
  double rounded = std::round(percent * 10) / 10;
  char buf[64];
  if (rounded == std::trunc(rounded))
    std::snprintf(buf, sizeof buf, "%.0f", rounded);
  else
    std::snprintf(buf, sizeof buf, "%.1f", rounded);
  return buf;
}

LowNodeUtilization::LowNodeUtilization(Args args) : args_(std::move(args)) {
  tracked_ = {api::kCpu(), api::kMemory(), api::kPods()};
  // Extended resources follow in name order (std::map order), so reasons read the same each run.
  for (const auto& [name, percent] : args_.thresholds) {
    api::Symbol r(name);
    if (std::find(tracked_.begin(), tracked_.end(), r) == tracked_.end()) tracked_.push_back(r);
  }
}

Status LowNodeUtilization::balance(framework::Handle& h) {
  const std::vector<api::Symbol>& tracked = tracked_;
  const std::size_t R = tracked.size();
  std::vector<NodeInfo> nodes = measure(h, tracked);
  Thresholds t = resolveThresholds(args_, tracked, nodes);
  std::vector<NodeInfo*> under, over;
  for (NodeInfo& n : nodes) {
    if (isUnderutilized(n, t))
      under.push_back(&n);
    else if (isOverutilized(n, t))
      over.push_back(&n);
  }
  log::debug("nodes classified", {{"plugin", kName},
                                  {"profile", h.profile()},
                                  {"underutilized", under.size()},
                                  {"overutilized", over.size()},
                                  {"nodes", nodes.size()}});

  auto nothingToDo = [&](const char* why) {
    log::debug("nothing to do", {{"plugin", kName}, {"profile", h.profile()}, {"reason", why}});
    return Status::ok();
  };
  if (under.empty()) return nothingToDo("no node is underutilized");
  if (static_cast<std::int64_t>(under.size()) <= args_.numberOfNodes)
    return nothingToDo("the number of underutilized nodes is not above numberOfNodes");
  if (under.size() == nodes.size()) return nothingToDo("all nodes are underutilized");
  if (over.empty()) return nothingToDo("no node is above targetThresholds");

  for (std::vector<NodeInfo*>* group : {&under, &over}) {
    for (NodeInfo* n : *group) {
      n->cap.resize(R);
      for (std::size_t k = 0; k < R; ++k) n->cap[k] = capAt(tracked[k], *n->node, t.high[k]);
    }
  }
  // What the underutilized nodes can still take before reaching their own caps.
  PerResource<std::int64_t> available(R, 0);
  for (const NodeInfo* n : under)
    for (std::size_t k = 0; k < R; ++k) available[k] += n->cap[k] - n->usage[k];

  std::vector<const NodeInfo*> destinations(under.begin(), under.end());
  Drain drain{h,
              args_,
              tracked,
              t,
              available,
              DestinationTaints(destinations),
              describeDestinations(tracked, destinations),
              std::unordered_set<std::string_view>(args_.excludedNamespaces.begin(), args_.excludedNamespaces.end())};
  for (NodeInfo* source : busiestFirst(tracked, over))
    if (!drain.from(*source)) return Status::ok();
  return Status::ok();
}

framework::PluginRegistration registration() {
  return {kName,
          [](const policy::RawArgs& raw, const framework::BuildContext&) -> Result<std::unique_ptr<framework::Plugin>> {
            auto args = decodeArgs(raw);
            if (!args.isOk()) return args.status();
            return std::unique_ptr<framework::Plugin>(std::make_unique<LowNodeUtilization>(std::move(args.value())));
          }};
}

}  // namespace kdesched::plugins::lownodeutilization
