#include "pkg/framework/cycle.h"

#include <algorithm>

#include "pkg/base/log.h"

namespace kdesched::framework {

std::string_view toString(ExtensionPoint p) {
  switch (p) {
    case ExtensionPoint::Deschedule: return "deschedule";
    case ExtensionPoint::Balance: return "balance";
  }
  return "?";
}

std::vector<const api::Node*> cycleNodes(const cluster::Snapshot& snapshot,
                                         const std::optional<api::LabelSelector>& nodeSelector) {
  std::vector<const api::Node*> out;
  for (const api::Node* n : snapshot.nodes()) {
    if (!n->isReady()) continue;
    if (nodeSelector && !nodeSelector->matches(n->labels)) continue;
    out.push_back(n);
  }
  return out;
}

namespace {
const PodScope kEveryPod;
}  // namespace

CycleResult runCycle(const std::vector<Profile>& profiles, const cluster::Snapshot& snapshot,
                     const std::optional<api::LabelSelector>& nodeSelector, EvictorProvider& evictors, Clock& clock,
                     CycleObserver* observer, const CycleScope& scope, const policy::Compat& compat,
                     const usage::ClusterUsage* usage) {
  const Clock::TimePoint start = clock.now();
  CycleResult result;
  std::vector<const api::Node*> nodes = cycleNodes(snapshot, nodeSelector);
  result.nodes = nodes.size();
  if (nodes.size() < 2) {
    result.skipped = true;
    result.skipReason =
        "requires >=2 ready nodes matching the policy's nodeSelector, found " + std::to_string(nodes.size());
    log::warn("skipping descheduling cycle", {{"reason", result.skipReason}});
    if (scope.explain) scope.explain->cycleStarts(snapshot, nodes, nodeSelector, result.skipReason);
    result.seconds = clock.secondsSince(start);
    return result;
  }
  CycleState state(compat);
  evictors.beginCycle(snapshot, state);
  const ScopeByNode byNode = scope.pods ? scopeByNode(snapshot, *scope.pods) : ScopeByNode{};
  if (scope.explain) {
    scope.explain->setUnboundJudged(judgesUnboundPods(profiles));
    scope.explain->cycleStarts(snapshot, nodes, nodeSelector, "");
  }

  auto selected = [&](const Plugin& plugin) {
    return scope.plugins.empty() ||
           std::find(scope.plugins.begin(), scope.plugins.end(), plugin.name()) != scope.plugins.end();
  };
  auto run = [&](const Profile& profile, Plugin& plugin, ExtensionPoint point, auto&& call) {
    if (!selected(plugin)) return;
    state.beginPluginRun();
    // Only deschedule plugins act on a run's pods alone; balancing weighs every pod.
    const PodScope& pods = point == ExtensionPoint::Deschedule ? scope.pods : kEveryPod;
    Handle h(snapshot, nodes, state, &evictors.forProfile(profile), profile.name, std::string(plugin.name()), pods,
             usage);
    h.setExplainer(scope.explain);
    if (pods) h.setScopeByNode(&byNode);
    const Clock::TimePoint t0 = clock.now();
    Status st = call(h);
    const double secs = clock.secondsSince(t0);
    if (!st.isOk())
      log::error("plugin finished with error",
                 {{"plugin", plugin.name()}, {"profile", profile.name}, {"error", st.message()}});
    if (observer) observer->pluginFinished(profile.name, std::string(plugin.name()), secs, st);
    result.runs.push_back({profile.name, std::string(plugin.name()), point, secs, st});
    if (scope.explain)
      scope.explain->afterPlugin(
          profile.name, std::string(plugin.name()),
          pods ? [&h](const api::Pod& p) { return h.inScope(p); } : std::function<bool(const api::Pod&)>());
  };

  if (scope.runDeschedule)
    for (const auto& profile : profiles)
      for (DeschedulePlugin* p : profile.deschedule)
        run(profile, *p, ExtensionPoint::Deschedule, [p](Handle& h) { return p->deschedule(h); });
  if (scope.runBalance)
    for (const auto& profile : profiles)
      for (BalancePlugin* p : profile.balance)
        run(profile, *p, ExtensionPoint::Balance, [p](Handle& h) { return p->balance(h); });

  result.seconds = clock.secondsSince(start);
  return result;
}

bool judgesUnboundPods(const std::vector<Profile>& profiles) {
  for (const Profile& profile : profiles)
    for (const auto& instance : profile.instances)
      if (instance->judgesUnboundPods()) return true;
  return false;
}

bool readsPodConditions(const std::vector<Profile>& profiles) {
  for (const Profile& profile : profiles)
    for (const auto& instance : profile.instances)
      if (instance->readsPodConditions()) return true;
  return false;
}

usage::Needs usageNeeds(const std::vector<Profile>& profiles) {
  usage::Needs needs;
  for (const Profile& profile : profiles)
    for (const auto& instance : profile.instances)
      if (const auto* u = dynamic_cast<const UsagePlugin*>(instance.get()))
        if (auto need = u->usageNeed()) {
          need->profile = profile.name;
          need->plugin = std::string(instance->name());
          needs.consumers.push_back(std::move(*need));
        }
  return needs;
}

}  // namespace kdesched::framework
