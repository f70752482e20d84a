#include "pkg/framework/cycle.h"

#include <algorithm>

#include "pkg/base/log.h"

namespace kdesched::framework {
namespace {

// Why an asked pod is seen by no plugin at all, before any runs: "" when plugins may look at it.
std::string outsideCycle(const api::Pod& pod, const cluster::Snapshot& snapshot,
                         const std::vector<const api::Node*>& nodes,
                         const std::optional<api::LabelSelector>& nodeSelector) {
  if (pod.nodeName.empty()) return "no plugin considered it: it is not bound to a node";
  for (const api::Node* n : nodes)
    if (n->nameSym == pod.nodeName) return "";
  const std::string head =
      "no plugin considered it: its node " + pod.nodeName.str() + " is not among the cycle's nodes";
  const api::Node* node = snapshot.node(pod.nodeName);
  if (!node) return head + " (the node is not in the snapshot)";
  if (!node->isReady()) return head + " (NotReady)";
  if (nodeSelector && !nodeSelector->matches(node->labels))
    return head + " (it does not match the policy's nodeSelector " + nodeSelector->toString() + ")";
  return head;
}

// The asked pods before the cycle runs: each found pod outside the cycle gets its one answer.
// Returns the pods plugins may look at.
std::vector<const api::Pod*> explainStart(Explainer& e, const cluster::Snapshot& snapshot,
                                          const std::vector<const api::Node*>& nodes,
                                          const std::optional<api::LabelSelector>& nodeSelector,
                                          const std::string& skipped) {
  std::vector<const api::Pod*> open;
  for (const api::Pod* pod : snapshot.pods()) {
    if (!e.wants(*pod)) continue;
    std::string why = skipped.empty() ? outsideCycle(*pod, snapshot, nodes, nodeSelector)
                                      : "no plugin considered it: the cycle was skipped (" + skipped + ")";
    if (why.empty())
      open.push_back(pod);
    else
      e.record(*pod, {"", "", ExplainOutcome::Excluded, "cycle", "", std::move(why)});
  }
  return open;
}

// What a plugin that said nothing about an asked pod made of it: the pod was gone already, or the
// plugin lists only running pods, or it passed the pod over without a word.
std::string silentWhy(const Explainer::Asked& a, const api::Pod& pod) {
  for (const ExplainStep& s : a.steps)
    if (s.outcome == ExplainOutcome::Evicted)
      return "already evicted in this cycle (profile " + s.profile + ", " + s.plugin + ")";
  if (pod.isTerminal())
    return "pod is " + std::string(api::toString(pod.phase)) + ": the plugin lists only running pods";
  return "the plugin did not look at it (not a candidate for it)";
}

// After a plugin run: an open pod the plugin said nothing about still gets its line.
void explainSilent(Explainer& e, const std::vector<const api::Pod*>& open, const std::string& profile,
                   const std::string& plugin) {
  for (const api::Pod* pod : open)
    for (const Explainer::Asked& a : e.asked())
      if (a.name == pod->name && a.ns == pod->ns.view() && !e.has(a, profile, plugin))
        e.record(*pod, {profile, plugin, ExplainOutcome::Skipped, "", "", silentWhy(a, *pod)});
}

}  // namespace

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

CycleResult runCycle(const std::vector<Profile>& profiles, const cluster::Snapshot& snapshot,
                     const std::optional<api::LabelSelector>& nodeSelector, EvictorProvider& evictors, Clock& clock,
                     CycleObserver* observer, const CycleScope& scope, const Compat& compat,
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
    if (scope.explain) explainStart(*scope.explain, snapshot, nodes, nodeSelector, result.skipReason);
    result.seconds = clock.secondsSince(start);
    return result;
  }
  CycleState state(compat);
  evictors.beginCycle(snapshot, state);
  std::vector<const api::Pod*> explained;
  if (scope.explain) explained = explainStart(*scope.explain, snapshot, nodes, nodeSelector, "");

  auto selected = [&](const Plugin& plugin) {
    return scope.plugins.empty() ||
           std::find(scope.plugins.begin(), scope.plugins.end(), plugin.name()) != scope.plugins.end();
  };
  auto run = [&](const Profile& profile, Plugin& plugin, const char* point, auto&& call) {
    if (!selected(plugin)) return;
    state.beginPluginRun();
    Handle h(snapshot, nodes, state, &evictors.forProfile(profile), profile.name, std::string(plugin.name()),
             std::string_view(point) == "deschedule" ? scope.pods : nullptr, usage);
    h.setExplainer(scope.explain);
    const Clock::TimePoint t0 = clock.now();
    Status st = call(h);
    const double secs = clock.secondsSince(t0);
    if (!st.isOk())
      log::error("plugin finished with error",
                 {{"plugin", plugin.name()}, {"profile", profile.name}, {"error", st.message()}});
    if (observer) observer->pluginFinished(profile.name, std::string(plugin.name()), secs, st);
    result.runs.push_back({profile.name, std::string(plugin.name()), point, secs, st});
    if (scope.explain) explainSilent(*scope.explain, explained, profile.name, std::string(plugin.name()));
  };

  if (scope.runDeschedule)
    for (const auto& profile : profiles)
      for (DeschedulePlugin* p : profile.deschedule)
        run(profile, *p, "deschedule", [p](Handle& h) { return p->deschedule(h); });
  if (scope.runBalance)
    for (const auto& profile : profiles)
      for (BalancePlugin* p : profile.balance) run(profile, *p, "balance", [p](Handle& h) { return p->balance(h); });

  result.seconds = clock.secondsSince(start);
  return result;
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
