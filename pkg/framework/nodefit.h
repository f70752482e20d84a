// NodeFit: would the scheduler accept this pod on that node? Used by DefaultEvictor's nodeFit, by
// RemovePodsViolatingNodeAffinity and by topology balancing. The checks are upstream's NodeFit
// (pkg/descheduler/node/node.go: the node is schedulable, the pod's nodeSelector and required node
// affinity match it, its NoSchedule/NoExecute taints are tolerated, no pod there is violated by the
// pod's required anti-affinity, and its requests fit what is left), plus one kdesched adds for safety: pods already on
// the candidate node whose required anti-affinity selects this pod also make it not fit (the scheduler checks that
// direction too).
#pragma once

#include <string>
#include <vector>

#include "pkg/api/scheduling.h"
#include "pkg/framework/plugin.h"

namespace kdesched::framework {

struct FitResult {
  bool fits = true;
  std::string reason;  // the first check that failed
  // That check in a few words, the same for every node it fails ("insufficient cpu", "untolerated
  // taint"), for tallies such as a landing estimate's "2 insufficient cpu, 1 untolerated taint".
  std::string check = {};
};

// nodeFit's checks that depend on the node alone, not on the pods on it: cordon, node
// selector/affinity, NoSchedule/NoExecute taints (the first of nodeFit's checks, in its order).
FitResult staticFit(const api::Pod& pod, const api::Node& node, bool withReason = true);
// `withReason` false: FitResult::reason stays empty (check is set), for callers that only branch.
FitResult nodeFit(const Handle& h, const api::Pod& pod, const api::Node& node, bool withReason = true);
// Some node of `nodes` other than the pod's own fits it.
bool podFitsAnyOtherNode(const Handle& h, const api::Pod& pod, const std::vector<const api::Node*>& nodes);
// Some node of `nodes` (the pod's own included) fits it.
bool podFitsAnyNode(const Handle& h, const api::Pod& pod, const std::vector<const api::Node*>& nodes);

// Requests of the non-terminal pods on a node that are not evicted this cycle (with compat
// evictedEarlierNotCounted: upstream, evicted ones too); `pods` is their count. Cached per cycle in
// CycleState and kept current as pods are evicted.
api::ResourceList nodeRequestedResources(const Handle& h, const api::Node& node);

// How pod (anti-)affinity terms select pods under the compat switches.
api::TermMatchOptions termMatchOptions(const policy::Compat& compat);

}  // namespace kdesched::framework
