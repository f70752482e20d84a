// Which pending pods MakeRoomForPendingPods helps, and in which order. A pod is helped when the
// scheduler has tried and given up for long enough, and nothing else is already acting for it:
// PodScheduled=False with reason Unschedulable for at least minPendingSeconds, no scheduling gate
// (the scheduler is not even trying), no nominated node (preemption is making room already), and a
// priority of at least minPriority.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/plugin.h"
#include "pkg/plugins/makeroomforpendingpods/args.h"

namespace kdesched::plugins::makeroomforpendingpods {

// Why a pending pod is not helped before any node is looked at.
enum class NotPending { None, ListFilter, Gated, Nominated, NotUnschedulable, TooRecent, LowPriority };

struct PendingSkip {
  NotPending why;
  const Args* args;
  const api::Pod* pod;
  api::Timestamp now;
  std::string text() const;
};

// Unbound, phase Pending and not terminating: the pods this plugin judges at all.
bool isUnboundPending(const api::Pod& pod);
// NotPending::None when the pod is helped (isUnboundPending must hold).
NotPending judgePending(const Args& args, const api::Pod& pod, api::Timestamp now);

// The snapshot's pods to help (in a scoped run, of the scope's), highest priority first, then
// oldest (creationTimestamp), then by namespace and name. Those left out are skipped on `h` with
// their reason. O(pods).
std::vector<const api::Pod*> pendingPodsToHelp(const framework::Handle& h, const Args& args, api::Timestamp now);

// When the scheduler last gave up on it (PodScheduled=False, reason Unschedulable): the
// condition's lastTransitionTime.
std::optional<api::Timestamp> unschedulableSince(const api::Pod& pod);

inline std::int32_t priorityOf(const api::Pod& pod) { return pod.priority.value_or(0); }

// Two pending pods a search answers alike (the same namespace, requests, constraints, labels and
// priority): one's "not helped" stands for the other while nothing was moved in between. Callers
// compare pods of one controller (a scale-up's replicas).
bool alikePending(const api::Pod& a, const api::Pod& b);

// Pending pods grouped by controller, each with a value (a search's answer), so that a pod alike
// (alikePending) to one already seen finds that one's value. Pods without a controller are never
// grouped: each is its own search.
template <typename V>
class AlikeGroups {
 public:
  const V* find(const api::Pod& pod) const {
    const api::OwnerReference* c = pod.controllerRef();
    if (!c) return nullptr;
    const auto it = byController_.find(c->uid);
    if (it == byController_.end()) return nullptr;
    for (const auto& [first, value] : it->second)
      if (alikePending(*first, pod)) return &value;
    return nullptr;
  }
  void add(const api::Pod& pod, V value) {
    if (const api::OwnerReference* c = pod.controllerRef()) byController_[c->uid].emplace_back(&pod, std::move(value));
  }
  void clear() { byController_.clear(); }

 private:
  std::unordered_map<std::string, std::vector<std::pair<const api::Pod*, V>>> byController_;
};

}  // namespace kdesched::plugins::makeroomforpendingpods
