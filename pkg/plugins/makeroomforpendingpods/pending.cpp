#include "pkg/plugins/makeroomforpendingpods/pending.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace kdesched::plugins::makeroomforpendingpods {

// Nullopt when the pod has no such condition; a time of 0 when the condition has none.
std::optional<api::Timestamp> unschedulableSince(const api::Pod& pod) {
  for (const api::PodCondition& c : pod.status().conditions)
    if (c.type() == "PodScheduled" && c.status() == "False" && c.reason() == "Unschedulable")
      return c.lastTransitionTime().value_or(0);
  return std::nullopt;
}

std::string PendingSkip::text() const {
  switch (why) {
    case NotPending::None: return "";
    case NotPending::ListFilter: return args->filter.whyNot(*pod);
    case NotPending::Gated: return "not helped: the pod has schedulingGates, the scheduler is not trying to place it";
    case NotPending::Nominated:
      return "not helped: the scheduler nominated node " + pod->status().nominatedNodeName.str() +
             " (preemption is making room there)";
    case NotPending::NotUnschedulable:
      return "not helped: no PodScheduled=False condition with reason Unschedulable (the scheduler has not given up "
             "on it)";
    case NotPending::TooRecent: {
      const api::Timestamp since = unschedulableSince(*pod).value_or(now);
      return "not helped yet: Unschedulable for " + std::to_string(std::max<api::Timestamp>(now - since, 0)) +
             "s, minPendingSeconds is " + std::to_string(args->minPendingSeconds);
    }
    case NotPending::LowPriority:
      return "not helped: priority " + std::to_string(priorityOf(*pod)) + " is below minPriority " +
             std::to_string(*args->minPriority);
  }
  return "not helped";
}

bool alikePending(const api::Pod& a, const api::Pod& b) {
  return a.ns == b.ns && priorityOf(a) == priorityOf(b) && a.requests == b.requests &&
         a.constraints() == b.constraints() && a.labels == b.labels;
}

bool isUnboundPending(const api::Pod& pod) {
  return pod.nodeName.empty() && pod.phase == api::PodPhase::Pending && !pod.isTerminating();
}

NotPending judgePending(const Args& args, const api::Pod& pod, api::Timestamp now) {
  if (!args.filter.allows(pod)) return NotPending::ListFilter;
  if (pod.schedulingGated) return NotPending::Gated;
  if (!pod.status().nominatedNodeName.empty()) return NotPending::Nominated;
  const std::optional<api::Timestamp> since = unschedulableSince(pod);
  if (!since) return NotPending::NotUnschedulable;
  if (now - *since < args.minPendingSeconds) return NotPending::TooRecent;
  if (args.minPriority && priorityOf(pod) < *args.minPriority) return NotPending::LowPriority;
  return NotPending::None;
}

std::vector<const api::Pod*> pendingPodsToHelp(const framework::Handle& h, const Args& args, api::Timestamp now) {
  std::vector<const api::Pod*> out;
  for (const api::Pod* pod : h.snapshot().pods()) {
    // A scoped run (the deadline queue's) helps the pending pods it names.
    if (!isUnboundPending(*pod) || !h.inScope(*pod)) continue;
    if (NotPending why = judgePending(args, *pod, now); why != NotPending::None) {
      h.skip(*pod, PendingSkip{why, &args, pod, now});
      continue;
    }
    out.push_back(pod);
  }
  auto created = [](const api::Pod* p) {
    return p->creationTimestamp.value_or(std::numeric_limits<api::Timestamp>::min());
  };
  std::sort(out.begin(), out.end(), [&](const api::Pod* a, const api::Pod* b) {
    if (priorityOf(*a) != priorityOf(*b)) return priorityOf(*a) > priorityOf(*b);
    if (created(a) != created(b)) return created(a) < created(b);
    return a->ns != b->ns ? a->ns < b->ns : a->name < b->name;
  });
  return out;
}

}  // namespace kdesched::plugins::makeroomforpendingpods
