#include "pkg/framework/explain.h"

#include <algorithm>

namespace kdesched::framework {

std::string_view toString(ExplainOutcome o) {
  switch (o) {
    case ExplainOutcome::Excluded: return "excluded";
    case ExplainOutcome::Skipped: return "skipped";
    case ExplainOutcome::Refused: return "refused";
    case ExplainOutcome::Evicted: return "evicted";
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
    if (last.outcome == ExplainOutcome::Evicted && last.profile == step.profile && last.plugin == step.plugin) return;
    if (last.profile == step.profile && last.plugin == step.plugin && last.outcome == step.outcome &&
        last.by == step.by && last.why == step.why)
      return;
  }
  a->steps.push_back(std::move(step));
}

bool Explainer::has(const Asked& a, std::string_view profile, std::string_view plugin) const {
  return std::any_of(a.steps.begin(), a.steps.end(),
                     [&](const ExplainStep& s) { return s.profile == profile && s.plugin == plugin; });
}

}  // namespace kdesched::framework
