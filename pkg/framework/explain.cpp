#include "pkg/framework/explain.h"

#include <algorithm>

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

// What a plugin that said nothing about an asked pod made of it.
std::string silentWhy(const Explainer::Asked& a, const api::Pod& pod, bool inScope) {
  for (const ExplainStep& s : a.steps)
    if (s.outcome == ExplainOutcome::Evicted || s.outcome == ExplainOutcome::Moved)
      return std::string(s.outcome == ExplainOutcome::Moved ? "already moved" : "already evicted") +
             " in this cycle (profile " + s.profile + ", " + s.plugin + ")";
  if (pod.isTerminal())
    return "pod is " + std::string(api::toString(pod.phase)) + ": the plugin lists only running pods";
  if (!inScope) return "out of scope: this event-triggered run acts only on the pods its events named";
  return "the plugin did not look at it (not a candidate for it)";
}

}  // namespace

std::string_view toString(ExplainOutcome o) {
  switch (o) {
    case ExplainOutcome::Excluded: return "excluded";
    case ExplainOutcome::Skipped: return "skipped";
    case ExplainOutcome::Refused: return "refused";
    case ExplainOutcome::Evicted: return "evicted";
    case ExplainOutcome::Moved: return "moved";
    case ExplainOutcome::Helped: return "helped";
  }
  return "?";
}

Explainer::Explainer(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    const auto slash = key.find('/');
    Asked a{key.substr(0, slash), slash == std::string::npos ? "" : key.substr(slash + 1), {}};
    const bool dup =
        std::any_of(asked_.begin(), asked_.end(), [&](const Asked& b) { return b.ns == a.ns && b.name == a.name; });
    if (!dup) asked_.push_back(std::move(a));
  }
}

Explainer::Asked* Explainer::find(const api::Pod& pod) {
  for (Asked& a : asked_)
    if (a.name == pod.name && a.ns == pod.ns.view()) return &a;
  return nullptr;
}

bool Explainer::wants(const api::Pod& pod) const {
  return std::any_of(asked_.begin(), asked_.end(),
                     [&](const Asked& a) { return a.name == pod.name && a.ns == pod.ns.view(); });
}

void Explainer::record(const api::Pod& pod, ExplainStep step) {
  Asked* a = find(pod);
  if (!a) return;
  if (!a->steps.empty()) {
    const ExplainStep& last = a->steps.back();
    // Evicted by this plugin: what the plugin says of the pod afterwards adds nothing.
    if ((last.outcome == ExplainOutcome::Evicted || last.outcome == ExplainOutcome::Moved) &&
        last.profile == step.profile && last.plugin == step.plugin)
      return;
    if (last.profile == step.profile && last.plugin == step.plugin && last.outcome == step.outcome &&
        last.by == step.by && last.why == step.why)
      return;
  }
  a->steps.push_back(std::move(step));
}

void Explainer::cycleStarts(const cluster::Snapshot& snapshot, const std::vector<const api::Node*>& nodes,
                            const std::optional<api::LabelSelector>& nodeSelector, const std::string& skipped) {
  open_.clear();
  for (const api::Pod* pod : snapshot.pods()) {
    if (!wants(*pod)) continue;
    // The plugin that judges unbound pods answers for it (a skipped cycle still says so).
    if (unboundJudged_ && skipped.empty() && pod->nodeName.empty()) continue;
    std::string why = skipped.empty() ? outsideCycle(*pod, snapshot, nodes, nodeSelector)
                                      : "no plugin considered it: the cycle was skipped (" + skipped + ")";
    if (why.empty())
      open_.push_back(pod);
    else
      record(*pod, {"", "", ExplainOutcome::Excluded, "cycle", "", std::move(why)});
  }
}

void Explainer::afterPlugin(const std::string& profile, const std::string& plugin,
                            const std::function<bool(const api::Pod&)>& inScope) {
  for (const api::Pod* pod : open_) {
    Asked* a = find(*pod);
    if (a && !has(*a, profile, plugin))
      record(*pod, {profile, plugin, ExplainOutcome::Skipped, "", "", silentWhy(*a, *pod, !inScope || inScope(*pod))});
  }
}

bool Explainer::has(const Asked& a, std::string_view profile, std::string_view plugin) const {
  return std::any_of(a.steps.begin(), a.steps.end(),
                     [&](const ExplainStep& s) { return s.profile == profile && s.plugin == plugin; });
}

}  // namespace kdesched::framework
