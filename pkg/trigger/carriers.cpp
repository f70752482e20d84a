#include "pkg/trigger/carriers.h"

#include <algorithm>

namespace kdesched::trigger {
namespace {

template <class Map, class Key>
void bump(Map& m, const Key& k, int delta) {
  auto it = m.try_emplace(k, 0).first;
  if ((it->second += delta) <= 0) m.erase(it);
}

}  // namespace

void CarrierKeys::countTerm(const api::Pod& carrier, const api::PodAffinityTerm& term, int delta) {
  if (!term.labelSelector) return;  // selects no pod
  const api::LabelSelector& s = *term.labelSelector;
  if (!s.matchLabels.empty()) {
    bump(pairs_, Pair{api::Symbol(s.matchLabels.front().first), api::Symbol(s.matchLabels.front().second)}, delta);
    return;
  }
  for (const api::LabelSelectorRequirement& r : s.matchExpressions) {
    if (r.op == api::LabelSelectorOp::In) {
      for (const std::string& v : r.values) bump(pairs_, Pair{api::Symbol(r.key), api::Symbol(v)}, delta);
      return;
    }
    if (r.op == api::LabelSelectorOp::Exists) {
      bump(keys_, api::Symbol(r.key), delta);
      return;
    }
  }
  for (const std::string& key : term.matchLabelKeys) {
    if (std::optional<std::string_view> v = carrier.labels.get(key)) {  // a key the carrier lacks is ignored
      bump(pairs_, Pair{api::Symbol(key), api::Symbol(*v)}, delta);
      return;
    }
  }
  wildcards_ = std::max(0L, wildcards_ + delta);
}

void CarrierKeys::count(const api::Pod& pod, int delta) {
  const api::SchedulingConstraints& c = pod.constraints();
  if (!c.hasRequiredAntiAffinity()) return;
  for (const api::PodAffinityTerm& term : c.podAntiAffinity->required) countTerm(pod, term, delta);
}

void CarrierKeys::update(const api::Pod& before, const api::Pod& after) {
  const api::SchedulingConstraints& c = after.constraints();
  if (&c == &before.constraints()) {
    if (!c.hasRequiredAntiAffinity()) return;
    const auto& terms = c.podAntiAffinity->required;
    const bool readsLabels = std::any_of(terms.begin(), terms.end(),
                                         [](const api::PodAffinityTerm& t) { return !t.matchLabelKeys.empty(); });
    if (!readsLabels || before.labels == after.labels) return;
  }
  remove(before);
  add(after);
}

void CarrierKeys::rebuild(const cluster::Snapshot& snapshot) {
  pairs_.clear();
  keys_.clear();
  wildcards_ = 0;
  for (const api::Pod* p : snapshot.pods()) add(*p);
}

bool CarrierKeys::mightSelect(const api::Labels& labels) const {
  if (wildcards_ > 0) return true;
  for (const auto& kv : labels)
    if (keys_.count(kv.first) != 0 || pairs_.count(kv) != 0) return true;
  return false;
}

}  // namespace kdesched::trigger
