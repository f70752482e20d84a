// kube-scheduler's PodTopologySpread filter for `whenUnsatisfiable: DoNotSchedule`: would placing
// the pod on a node make some such constraint's skew exceed its maxSkew? For the landing estimate
// (landing.h) only: DefaultEvictor's nodeFit does not check spread, as upstream's does not.
//
// As the scheduler: the pods counted are the constraint's selector (labelSelector + matchLabelKeys)
// in the pod's namespace, neither terminating nor terminal, on the nodes that carry every one of
// the pod's DoNotSchedule topology keys and pass the constraint's inclusion policies
// (nodeAffinityPolicy, default Honor: the pod's nodeSelector and required node affinity;
// nodeTaintsPolicy, default Ignore). Each such node's value is a domain, counted from 0; the global
// minimum is 0 while there are fewer domains than minDomains (default 1). A node passes when
// count(its domain) + (1 if the pod matches the selector) - minimum <= maxSkew for every constraint.
// The pod itself and the pods evicted earlier in the cycle (CycleState::isEvicted) are gone.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/framework/nodefit.h"

namespace kdesched::framework {

class SpreadFit {
 public:
  // Counts once (the scheduler's PreFilter): O(nodes + pods of the pod's namespace).
  SpreadFit(const Handle& h, const api::Pod& pod);

  // Whether the node passes every DoNotSchedule constraint of the pod, and if not, why.
  FitResult check(const api::Node& node) const;
  bool constrained() const { return !constraints_.empty(); }

 private:
  struct Constraint {
    const api::TopologySpreadConstraint* declared = nullptr;
    std::optional<api::LabelSelector> selector;
    int self = 0;  // 1 when the pod matches its own selector
    std::unordered_map<api::Symbol, int> counts;
    int minimum = 0;
  };
  std::vector<Constraint> constraints_;
};

}  // namespace kdesched::framework
