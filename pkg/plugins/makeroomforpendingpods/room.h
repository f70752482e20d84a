// Where, and by moving which running pods, a pending pod would fit. For each cycle node the
// pending pod is checked with kdesched's scheduler model (framework::nodeFit, plus DoNotSchedule
// topology spread as the landing estimate checks it); a node that fails on anything but resources
// or the pod count (affinity, selectors, taints, cordon, anti-affinity) is out, as no move can fix
// that. On the others the shortfall is known, and the search looks for the fewest pods to move:
//
//   - only pods of priority no higher than the pending pod's (moving a more important pod for a
//     less important one would be preemption inverted), that the profile's filters let go;
//   - pruned: a node whose movable pods together cannot cover the shortfall is out at once; of the
//     rest, the kCandidatesPerNode pods that cover most of it are combined, in subsets of at most
//     maxMovesPerPod, so a node costs at most C(kCandidatesPerNode, maxMovesPerPod) sums;
//   - the sets that cover the shortfall are ranked (fewest moves, lowest highest priority, youngest,
//     then node and pod names: deterministic) and tried in that order, at most kPlansTried of them:
//     the eviction chain must admit them all together (limits, PDB budgets), and every moved pod
//     must fit another node, by nodeFit and the room left there once the pending pod and the other
//     moved pods are placed (RoomLedger).
//
// Cost per pending pod: one nodeFit per cycle node, a pass over the pods of the nodes left (their
// filters asked once per run: RunCache), plus the bounded subset sums of the nodes left, plus at
// most kPlansTried × maxMovesPerPod × nodes nodeFits for landings: linear in nodes and pods. Pending
// pods of one controller with the same requests, constraints, labels and priority share one search
// while nothing was moved in between (makeroomforpendingpods.cpp), and a run searches at most
// kSearchesPerRun pending pods (rotation.h): a run is linear in nodes and pods.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/plugin.h"
#include "pkg/plugins/makeroomforpendingpods/args.h"

namespace kdesched::plugins::makeroomforpendingpods {

inline constexpr std::size_t kCandidatesPerNode = 12;
inline constexpr std::size_t kPlansTried = 32;

// The room left on each node once this run's planned placements are counted: allocatable minus
// the requests nodeFit counts (framework::nodeRequestedResources), minus the pending pods and moved
// pods placed there, plus the moved pods taken off. A node's entry is made on first use and then
// kept, so the evictions the plan makes (which nodeFit's counts then leave out) are not counted twice.
class RoomLedger {
 public:
  explicit RoomLedger(const framework::Handle& h) : h_(&h) {}
  const api::ResourceList& freeOn(const api::Node& node);
  // The pod's requests and a pod slot fit in what is left on the node.
  bool roomFor(const api::Pod& pod, const api::Node& node);
  void place(const api::Pod& pod, const api::Node& node, int sign = +1);

 private:
  const framework::Handle* h_;
  std::unordered_map<api::Symbol, api::ResourceList> free_;
};

// What every pending pod's search in one run reads alike: each node's pods that are not
// terminating, and whether the profile's filters let each go, asked once per pod per run (not once
// per pending pod) and only of a pod some search may move. Pods evicted later in the run are
// skipped by the reader.
class RunCache {
 public:
  explicit RunCache(const framework::Handle& h) : h_(&h) {}
  struct Resident {
    const api::Pod* pod;
    signed char evictable = -1;  // -1: not asked yet
  };
  std::vector<Resident>& residentsOn(const api::Node& node);
  // The profile's Filter and PreEvictionFilter plugins let it go (asked on first use).
  bool evictable(Resident& r);
  // At most what moving `k` of the node's pods (k <= kMaxMovesPerPod), any of them, frees of
  // `resource`: the sum of the k largest requests. An upper bound (priorities, filters and this
  // run's evictions aside), so a node it rules out is out for certain; O(1) after the first call.
  std::int64_t mostFreedBy(const api::Node& node, api::Symbol resource, std::size_t k);
  // What moving all of them frees of `resource` (the same bound, k unbounded).
  std::int64_t allFreedBy(const api::Node& node, api::Symbol resource);

 private:
  const framework::Handle* h_;
  std::unordered_map<api::Symbol, std::vector<Resident>> byNode_;
  struct Freed {
    std::int64_t total = 0;
    std::vector<std::int64_t> largest;  // at most kMaxMovesPerPod, descending
  };
  const Freed& freedOf(const api::Node& node, api::Symbol resource);
  std::map<std::pair<api::Symbol, api::Symbol>, Freed> freed_;
};

// What was decided for one pending pod.
struct RoomPlan {
  const api::Node* node = nullptr;
  std::vector<const api::Pod*> moves;      // the pods to evict, in eviction order
  std::vector<const api::Node*> landings;  // parallel to moves: where each is expected
};

struct RoomSearchResult {
  bool found = false;
  RoomPlan plan;
  const api::Node* fitsAlready = nullptr;  // the pending pod fits this node as things are
  // Why each node could not host it, the first reason of each: reason -> nodes (for explain).
  std::map<std::string, std::size_t> notHere;
  // Why each set of moves that would have made room was not taken: reason -> sets.
  std::map<std::string, std::size_t> setsRefused;
  std::string text(const api::Pod& pending, const Args& args) const;  // why not helped, for people
};

// Finds the plan for `pending` (and, when found, records it in `ledger`). Evicts nothing.
// `now` ranks moves by the pods' ages (the youngest lose least).
RoomSearchResult searchRoom(const framework::Handle& h, const Args& args, const api::Pod& pending, RoomLedger& ledger,
                            RunCache& cache, api::Timestamp now);

}  // namespace kdesched::plugins::makeroomforpendingpods
