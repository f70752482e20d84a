#include "pkg/trigger/interest.h"

#include <algorithm>

namespace kdesched::trigger {

Interest interestOf(const std::vector<framework::Profile>& profiles) {
  Interest interest;
  for (const framework::Profile& p : profiles)
    for (const framework::DeschedulePlugin* d : p.deschedule)
      if (std::find(kStatusPlugins.begin(), kStatusPlugins.end(), d->name()) != kStatusPlugins.end())
        interest.podStatus = true;
      else if (d->name() == kMakeRoomPlugin)
        interest.pendingPods = true;
  return interest;
}

DeadlineFn deadlinesOf(const std::vector<framework::Profile>& profiles) {
  std::vector<const framework::DeadlinePlugin*> plugins;
  for (const framework::Profile& p : profiles) plugins.insert(plugins.end(), p.deadlines.begin(), p.deadlines.end());
  if (plugins.empty()) return nullptr;
  return [plugins](const api::Pod& pod, api::Timestamp now) {
    std::vector<PodDeadline> out;
    for (const framework::DeadlinePlugin* d : plugins) {
      // An unbound pod is only for a plugin that judges unbound pods (MakeRoomForPendingPods).
      if (pod.nodeName.empty() && !d->judgesUnboundPods()) continue;
      if (auto at = d->eligibleAt(pod, now)) out.push_back({*at, std::string(d->name())});
    }
    return out;
  };
}

}  // namespace kdesched::trigger
