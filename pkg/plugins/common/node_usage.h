// Node usage as upstream's nodeutilization package measures it, shared by LowNodeUtilization and
// HighNodeUtilization (upstream: plugins/nodeutilization/nodeutilization.go): request-based usage
// per node, percentages, capacity caps, source-node ordering, and the eviction loop that moves
// pods off source nodes while the destination nodes have room (evictPodsFromSourceNodes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pkg/framework/plugin.h"
#include "pkg/policy/args.h"

namespace kdesched::plugins::nodeusage {

// One value per tracked resource, in the plugin's tracked order.
template <typename T>
using PerResource = std::vector<T>;

// Quantity.Value() for every resource but cpu, MilliValue() for cpu: the unit upstream counts a
// resource in, so percentages, caps and sort keys must be computed on it, not on our milli-units.
std::int64_t upstreamUnits(const api::Symbol& r, std::int64_t milli);

// A node's capacity of a tracked resource in milli-units: allocatable (capacity when allocatable is
// empty), and 100 units of MetricResource on every node, as upstream gives the Prometheus score.
std::optional<std::int64_t> capacityOf(const api::Symbol& r, const api::Node& node);

struct NodeUsage {
  const api::Node* node = nullptr;
  PerResource<std::int64_t> usage;             // requests of live pods, milli; pods = count × 1000
  PerResource<std::optional<double>> percent;  // unset when the node has no such resource
  PerResource<std::int64_t> cap;               // capacity at the high threshold, milli (see capAt)
};

PerResource<std::optional<double>> percentages(const std::vector<api::Symbol>& tracked, const api::Node& node,
                                               const PerResource<std::int64_t>& usage);

// upstream's capNodeCapacityToThreshold: 0 when the node lacks the resource, full capacity
// without a threshold, else int64(threshold × 0.01 × capacity) in upstream's unit.
std::int64_t capAt(const api::Symbol& r, const api::Node& node, const std::optional<double>& threshold);

// Usage of every node of the cycle. nodeRequestedResources sums the live pods (pods evicted earlier
// in this cycle are gone) and shares its per-cycle cache with NodeFit.
std::vector<NodeUsage> measure(const framework::Handle& h, const std::vector<api::Symbol>& tracked);

// The tracked resources whose usage on the node is saturated (api::kSaturatedMilli: a pod there
// requests, or the requests sum to, more than int64 milli-units), comma-separated; "" for none.
std::string saturatedUsageOf(const std::vector<api::Symbol>& tracked, const NodeUsage& n);
// `thresholds` without the resources whose capacity on the node is saturated. Such a percentage
// is an upper bound of the truth (the capacity is at least the saturated figure): good for "at or
// below a threshold", not for "above one", so it must not make the node a source.
PerResource<std::optional<double>> withoutSaturatedCapacity(const std::vector<api::Symbol>& tracked, const NodeUsage& n,
                                                            PerResource<std::optional<double>> thresholds);
// Removes the nodes with a saturated usage from `nodes`: their usage is unknown, so they are
// neither a source nor a destination nor part of a mean. A saturated figure is no ground for an
// eviction, and without them the plugins can only evict less. Their explained pods hear why;
// returns "node (resources)" for each node left out.
std::vector<std::string> leaveOutSaturated(const framework::Handle& h, const std::vector<api::Symbol>& tracked,
                                           std::vector<NodeUsage>& nodes);

// Upstream's isNodeBelowThreshold: usage ≤ threshold for every resource with a threshold (a
// resource the node lacks counts as 0%).
bool atOrBelow(const NodeUsage& n, const PerResource<std::optional<double>>& thresholds);
// Upstream's isNodeAboveThreshold: usage > threshold for some resource with a threshold.
bool above(const NodeUsage& n, const PerResource<std::optional<double>>& thresholds);

// Sets every node's cap from `thresholds` (unset: full capacity), as upstream's
// capNodeCapacitiesToThreshold.
void setCaps(const std::vector<api::Symbol>& tracked, const std::vector<NodeUsage*>& nodes,
             const PerResource<std::optional<double>>& thresholds);
// What `nodes` can still take before reaching their caps, summed (assessAvailableResourceInNodes).
PerResource<std::int64_t> roomBelowCaps(const std::vector<NodeUsage*>& nodes, std::size_t resources);

// Upstream's sortNodesByUsage: by the unweighted sum of raw numbers (memory bytes dominate).
// Upstream's sort is unstable over a map; ties keep node-name order here so plans are reproducible.
std::vector<NodeUsage*> byUsageSum(const std::vector<api::Symbol>& tracked, const std::vector<NodeUsage*>& nodes,
                                   bool ascending);

// A percentage for people: rounded to one decimal, without a trailing ".0" ("85", "88.9").
std::string formatPercent(double percent);

// "cpu 80%, memory 50%, pods n/a"; `annotate(k, percent)` may append to a resource's entry.
std::string describeUsage(const std::vector<api::Symbol>& tracked, const PerResource<std::optional<double>>& pct,
                          const std::function<std::string(std::size_t, double)>& annotate = nullptr);

// "node2 (cpu 10%, ...), node3 (...) and 2 more": the first few nodes, so a reason stays readable.
std::string describeNodes(const std::vector<api::Symbol>& tracked, const std::vector<NodeUsage*>& nodes);

// Why a node-utilization plugin has nothing to do (upstream's early returns, in its order), or null:
// no underutilized node, not more of them than numberOfNodes, all underutilized, or `noPeers`
// (no overutilized source, no schedulable destination) with `noPeersWhy`.
const char* idleReason(std::size_t under, std::size_t nodes, std::int64_t numberOfNodes, bool noPeers,
                       const char* noPeersWhy);
// `idle` with the counts behind it, for `plan --explain`: "<idle> (2 underutilized, 0 overutilized
// of 5 nodes; numberOfNodes 0)"; `over` is left out when the plugin has no such class. Empty when
// `idle` is null (the plugin has work).
std::string idleDetail(const char* idle, std::size_t under, std::optional<std::size_t> over, std::size_t nodes,
                       std::int64_t numberOfNodes);

// A node-utilization plugin's skips after it classified the nodes: with `idle` (why it has nothing
// to do), every pod on `nodes`, said with that; else the pods on nodes that are not `sources`: "its
// node X <notSource> (cpu 40% vs 50%, ...)" against `thresholds`.
void skipNotSources(const framework::Handle& h, const std::vector<api::Symbol>& tracked,
                    const std::vector<NodeUsage>& nodes, const std::vector<NodeUsage*>& sources,
                    const PerResource<std::optional<double>>& thresholds, const std::string& idle,
                    std::string_view notSource);

// Upstream's PodToleratesTaints against the destination nodes: the pod tolerates every taint (any
// effect) of at least one of them, trying a node only when the pod has at least as many
// tolerations as the node has taints. Identical taint sets are checked once, and the answer is
// memoized per shared constraints block (pods of one ReplicaSet share their tolerations).
class DestinationTaints {
 public:
  explicit DestinationTaints(const std::vector<NodeUsage*>& destinations);
  bool toleratedBy(const api::Pod& pod);

 private:
  bool untainted_ = false;
  std::vector<const std::vector<api::Taint>*> sets_;
  std::unordered_map<const api::SchedulingConstraints*, bool> memo_;
};

// Upstream's evictPodsFromSourceNodes: from each source node in the given order, the pods passing
// the profile's Filter (and `removable`) are evicted lowest priority first, skipping pods that
// tolerate no destination's taints and pods in `excludedNamespaces`, while `keepGoing` holds.
// Every eviction moves the pod's requests off the source and out of `available`.
struct Drain {
  framework::Handle& h;
  const std::vector<api::Symbol>& tracked;
  PerResource<std::int64_t>& available;
  DestinationTaints taints;
  std::unordered_set<std::string_view> excludedNamespaces;
  std::optional<std::uint32_t> evictionLimitNode;
  // Extra pod filter on top of the profile's Filter (null: none).
  std::function<bool(const api::Pod&)> removable;
  // Upstream's continueEvictionCond, asked before the first eviction and after each one.
  std::function<bool(const NodeUsage& source, const PerResource<std::int64_t>& available)> keepGoing;
  // The reason for evicting a pod from `source` (source.usage is its usage now; source.percent is
  // as measured at the start).
  std::function<std::string(const NodeUsage& source)> reason;
  // What an evicted pod takes off its node and off `available`, per tracked resource; nullopt
  // skips the pod (its usage is unknown). Null: its requests (pods: 1).
  std::function<std::optional<PerResource<std::int64_t>>(const api::Pod&)> podUsage;
  // No per-pod usage at all (a Prometheus score): as upstream, evict without accounting, one pod
  // per source node, or up to evictionLimitNode when that is set.
  bool unaccounted = false;

  void from(const std::vector<NodeUsage*>& sources);

 private:
  // False when the total limit ends the plugin.
  bool fromNode(NodeUsage& source);
  // The candidates from `from` on (after it, when it was evicted) are skipped: the loop stopped for `why`.
  void skipRest(const std::vector<const api::Pod*>& candidates, const api::Pod* from, const std::string& why) const;
};

}  // namespace kdesched::plugins::nodeusage
