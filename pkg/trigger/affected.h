// From store events to the pods whose constraints they may have broken, through indexes — the
// same idea as kube-scheduler moving exactly the unschedulable pods an assigned pod's change
// relates to back to its active queue, applied to running pods.
#pragma once

#include <array>
#include <chrono>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "pkg/cluster/store.h"

namespace kdesched::trigger {

inline constexpr const char* kAntiAffinityPlugin = "RemovePodsViolatingInterPodAntiAffinity";
inline constexpr const char* kNodeAffinityPlugin = "RemovePodsViolatingNodeAffinity";
inline constexpr const char* kNodeTaintsPlugin = "RemovePodsViolatingNodeTaints";
inline constexpr const char* kMakeRoomPlugin = "MakeRoomForPendingPods";
// The plugins that judge a pod by its status: a status change may make it a candidate.
inline constexpr std::array<const char*, 3> kStatusPlugins = {"RemoveFailedPods", "RemovePodsHavingTooManyRestarts",
                                                              "PodLifeTime"};

// Which kinds of event the configured plugins can act on; the rest are not worth a run.
struct Interest {
  bool podStatus = false;  // a status plugin is enabled in some profile
  // MakeRoomForPendingPods is enabled: a capacity change (the debounced balance run's events: a
  // pod gone, a node added or Ready) looks at the pending pods too.
  bool pendingPods = false;
};

// What changed, reduced to what the mapping needs (the objects themselves may be gone by the time
// the debounced run looks at them).
struct PodSeed {
  api::Symbol ns;
  std::string name;
  api::Labels labels;
  api::Symbol node;  // where it is bound now
  bool carriesAntiAffinity = false;
  bool placement = true;  // bound or relabelled: placement rules may be broken
  bool status = false;    // its status changed (failed, restarted, a reason or condition changed)
};

struct NodeSeed {
  std::string name;
  bool taintsChanged = false;
};

struct Seeds {
  std::vector<PodSeed> pods;    // bound, moved or relabelled pods
  std::vector<NodeSeed> nodes;  // nodes whose labels, taints or unschedulable flag changed
  bool balance = false;         // a pod went away or a node came: imbalance possible
  bool empty() const { return pods.empty() && nodes.empty() && !balance; }
};

// Classifies one store event and adds what it seeds. Returns the event's kind for metrics
// ("pod-bound", "pod-relabelled", "pod-deleted", "pod-terminating", "pod-failed", "pod-restarted",
// "pod-status", "node-changed", "node-added", "node-readiness"), or "" when it cannot affect any
// decision (status-only updates nobody is interested in).
std::string addSeed(const cluster::StoreEvent& event, Seeds& seeds, const Interest& interest = {});

struct Scope {
  api::PodNames pods;             // deschedule candidates
  std::set<std::string> plugins;  // deschedule plugins that apply
  bool balance = false;           // also run the balance plugins (debounced separately)
};

// Maps seeds to affected pods against a snapshot:
//  - a bound/relabelled pod P: P itself when it carries required anti-affinity; every pod with a
//    required anti-affinity term selecting P's labels whose node shares the term's topology domain
//    with P's node; pods of spread constraints selecting P → balance;
//    a pod bound next to a pod of the same controller → balance (duplicates);
//  - a pod whose status changed: P itself, with the status plugins;
//  - a node whose labels/taints/unschedulable changed: its pods with node affinity or a node
//    selector (node affinity), its pods with anti-affinity terms (domains may have changed), all
//    its pods when its taints changed and it has some (node taints), and balance (spread domains);
//  - deletions and new nodes: balance only.
Scope affectedPods(const cluster::Snapshot& snapshot, const Seeds& seeds);

}  // namespace kdesched::trigger
