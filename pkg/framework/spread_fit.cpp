#include "pkg/framework/spread_fit.h"

#include <algorithm>

#include "pkg/api/scheduling.h"

namespace kdesched::framework {
namespace {

const api::Symbol* labelValue(const api::Labels& labels, std::string_view key) {
  for (const auto& [k, v] : labels)
    if (k.view() == key) return &v;
  return nullptr;
}

// The constraint's inclusion policies: nodeAffinityPolicy (unset: Honor), nodeTaintsPolicy (unset:
// Ignore).
bool included(const api::TopologySpreadConstraint& tsc, const api::Pod& pod, const api::Node& node) {
  if (tsc.nodeAffinityPolicy.value_or(api::InclusionPolicy::Honor) == api::InclusionPolicy::Honor &&
      !api::podMatchesNodeSelectorAndAffinity(pod, node))
    return false;
  if (tsc.nodeTaintsPolicy.value_or(api::InclusionPolicy::Ignore) == api::InclusionPolicy::Honor &&
      !api::toleratesNoScheduleNoExecute(pod.constraints().tolerations, node.taints))
    return false;
  return true;
}

}  // namespace

SpreadFit::SpreadFit(const Handle& h, const api::Pod& pod) {
  for (const auto& tsc : pod.constraints().topologySpreadConstraints) {
    if (tsc.whenUnsatisfiable != api::UnsatisfiableAction::DoNotSchedule) continue;
    Constraint c;
    c.declared = &tsc;
    c.selector = api::spreadSelector(tsc, pod.labels);
    c.self = c.selector && c.selector->matches(pod.labels) ? 1 : 0;
    constraints_.push_back(std::move(c));
  }
  if (constraints_.empty()) return;

  // The scheduler counts only nodes with every key, each constraint on the nodes its inclusion
  // policies take in; each such node's value is a domain, from 0. No per-node allocation: this
  // runs once per planned eviction of a spread pod.
  auto forDomains = [&](const api::Node& n, auto&& each) {
    for (const auto& c : constraints_)
      if (!labelValue(n.labels, c.declared->topologyKey)) return;
    for (auto& c : constraints_)
      if (included(*c.declared, pod, n)) each(c, *labelValue(n.labels, c.declared->topologyKey));
  };
  for (const api::Node* n : h.snapshot().nodes())
    forDomains(*n, [](Constraint& c, const api::Symbol& value) { c.counts.try_emplace(value, 0); });
  for (const api::Pod* p : h.snapshot().podsInNamespace(pod.ns)) {
    if (p == &pod || p->nodeName.empty() || p->isTerminating() || p->isTerminal() || h.isEvicted(*p)) continue;
    const api::Node* n = h.snapshot().node(p->nodeName);
    if (!n) continue;
    forDomains(*n, [p](Constraint& c, const api::Symbol& value) {
      if (c.selector && c.selector->matches(p->labels)) ++c.counts[value];
    });
  }
  for (auto& c : constraints_) {
    const auto minDomains = static_cast<std::size_t>(std::max(c.declared->minDomains.value_or(1), 0));
    if (c.counts.empty() || c.counts.size() < minDomains) continue;  // the global minimum is 0
    c.minimum = std::min_element(c.counts.begin(), c.counts.end(), [](const auto& a, const auto& b) {
                  return a.second < b.second;
                })->second;
  }
}

FitResult SpreadFit::check(const api::Node& node) const {
  for (const auto& c : constraints_) {
    const std::string& key = c.declared->topologyKey;
    const api::Symbol* v = labelValue(node.labels, key);
    if (!v)
      return {false,
              "node " + node.name + " has no label " + key + " (topology key of a DoNotSchedule spread constraint)",
              "topology spread"};
    auto it = c.counts.find(*v);
    const int skew = (it == c.counts.end() ? 0 : it->second) + c.self - c.minimum;
    if (skew > c.declared->maxSkew)
      return {false,
              "topology spread: on node " + node.name + " (" + key + "=" + v->str() + ") the skew would be " +
                  std::to_string(skew) + ", more than maxSkew " + std::to_string(c.declared->maxSkew),
              "topology spread"};
  }
  return {};
}

}  // namespace kdesched::framework
