#include "pkg/plugins/topologyspread/domains.h"

#include <algorithm>

#include "pkg/api/scheduling.h"
#include "pkg/framework/selection.h"

namespace kdesched::plugins::topologyspread {

using api::Symbol;
using api::UnsatisfiableAction;

void DomainCounts::addDomain(bool eligible) {
  counts_.push_back(0);
  eligible_.push_back(eligible);
  bump(all_, 0, +1);
  if (eligible) bump(eligibleHist_, 0, +1);
}

void DomainCounts::add(int d, int delta) {
  int& c = counts_[static_cast<std::size_t>(d)];
  bump(all_, c, -1);
  if (eligible_[static_cast<std::size_t>(d)]) bump(eligibleHist_, c, -1);
  c += delta;
  bump(all_, c, +1);
  if (eligible_[static_cast<std::size_t>(d)]) bump(eligibleHist_, c, +1);
}

void DomainCounts::bump(std::map<int, int>& h, int value, int delta) {
  int& n = h[value];
  n += delta;
  if (n == 0) h.erase(value);
}

int Constraint::domain(const Symbol& value, bool eligible) {
  auto [it, inserted] = domainIndex.try_emplace(value, static_cast<int>(domainValue.size()));
  if (inserted) {
    domainValue.push_back(value);
    domainNodes.emplace_back();
    domainPods.emplace_back();
    live.addDomain(eligible);
    if (eligible) ++eligibleDomains;
  }
  return it->second;
}

int Constraint::findDomain(const Symbol& value) const {
  auto it = domainIndex.find(value);
  return it == domainIndex.end() ? -1 : it->second;
}

int Constraint::initialSkew() const {
  if (initial.empty()) return 0;
  auto [lo, hi] = std::minmax_element(initial.begin(), initial.end());
  return *hi - (minDomainsUnmet() ? 0 : *lo);
}

int PodEntry::countedDomain(int ci) const {
  for (const auto& [c, d] : counted)
    if (c == ci) return d;
  return -1;
}

DomainBuilder::DomainBuilder(const framework::Handle& h, const Args& args) : h_(h), args_(args), nodes_(h.nodes()) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) nodeIndex_.emplace(nodes_[i]->nameSym, static_cast<int>(i));
}

bool DomainBuilder::build(std::span<const api::Pod* const> pods, NamespaceDomains& out) {
  std::vector<std::pair<const api::Pod*, int>> listed;
  bool anyBalanced = false;
  for (const api::Pod* p : pods) {
    auto it = nodeIndex_.find(p->nodeName);
    if (p->nodeName.empty() || it == nodeIndex_.end() || p->isTerminal() || h_.isEvicted(*p)) continue;
    if (!args_.filter.allows(*p)) continue;
    listed.emplace_back(p, it->second);
    for (const auto& tsc : p->constraints().topologySpreadConstraints)
      anyBalanced = anyBalanced || args_.balances(tsc.whenUnsatisfiable);
  }
  // Nothing here can need balancing: skip the (possibly costly) evictor filter for the namespace.
  if (!anyBalanced) return false;

  ns_ = &out;
  out = NamespaceDomains{};
  entryIndex_.clear();
  consByKey_.clear();
  declaredCache_.clear();
  for (const auto& [p, node] : listed) {
    if (!h_.filter(*p).ok) continue;
    entryIndex_.emplace(p, static_cast<int>(out.entries.size()));
    PodEntry e;
    e.pod = p;
    e.node = node;
    out.entries.push_back(std::move(e));
  }
  for (auto& e : out.entries) e.declared = declaredConstraints(*e.pod);
  for (std::size_t ci = 0; ci < out.constraints.size(); ++ci) count(static_cast<int>(ci));
  ns_ = nullptr;
  return true;
}

// The pod's constraints as namespace-table indices. Pods sharing a spec (and the values of the
// labels their matchLabelKeys name) share the answer.
std::vector<int> DomainBuilder::declaredConstraints(const api::Pod& pod) {
  const auto& sc = pod.constraints();
  if (sc.topologySpreadConstraints.empty()) return {};
  std::string labelKey;
  for (const auto& tsc : sc.topologySpreadConstraints)
    for (const auto& k : tsc.matchLabelKeys) {
      auto v = pod.labels.get(k);
      labelKey += v ? std::string(*v) + '\x01' : std::string("\x02");
    }
  auto cacheKey = std::make_pair(&sc, std::move(labelKey));
  if (auto it = declaredCache_.find(cacheKey); it != declaredCache_.end()) return it->second;
  std::vector<int> out;
  for (const auto& tsc : sc.topologySpreadConstraints) out.push_back(intern(makeConstraint(tsc, pod)));
  declaredCache_.emplace(std::move(cacheKey), out);
  return out;
}

Constraint DomainBuilder::makeConstraint(const api::TopologySpreadConstraint& tsc, const api::Pod& pod) {
  const auto& sc = pod.constraints();
  Constraint c;
  c.declared = &tsc;
  c.maxSkew = tsc.maxSkew;
  c.when = tsc.whenUnsatisfiable;
  // Upstream v0.36 ignores minDomains (compat minDomainsHonoured: upstream).
  if (c.when == UnsatisfiableAction::DoNotSchedule && tsc.minDomains && h_.state().compat().minDomainsHonoured)
    c.minDomains = *tsc.minDomains;
  // As kube-scheduler: matchLabelKeys become key=<this pod's value> requirements, for the keys the
  // pod has. A constraint without a labelSelector selects nothing either way.
  c.selector = api::spreadSelector(tsc, pod.labels);
  NodeScope s;
  s.topologyKey = tsc.topologyKey;
  s.honorAffinity = tsc.nodeAffinityPolicy.value_or(api::InclusionPolicy::Honor) == api::InclusionPolicy::Honor;
  if (s.honorAffinity) {
    s.affinity.nodeSelector = sc.nodeSelector;
    if (sc.nodeAffinity && sc.nodeAffinity->required) {
      s.affinity.nodeAffinity.emplace();
      s.affinity.nodeAffinity->required = sc.nodeAffinity->required;
    }
  }
  s.honorTaints = tsc.nodeTaintsPolicy.value_or(api::InclusionPolicy::Ignore) == api::InclusionPolicy::Honor;
  if (s.honorTaints) s.tolerations = sc.tolerations;
  c.scope = internScope(std::move(s));
  c.nodeValues = &valuesFor(tsc.topologyKey);
  c.balanced = args_.balances(c.when);
  return c;
}

int DomainBuilder::intern(Constraint c) {
  std::string key = std::to_string(c.scope) + '|' + std::to_string(c.maxSkew) + '|' +
                    std::to_string(static_cast<int>(c.when)) + '|' + std::to_string(c.minDomains) + '|' +
                    (c.selector ? "s:" + c.selector->toString() : "nil");
  auto& cons = ns_->constraints;
  auto& bucket = consByKey_[key];
  for (int i : bucket) {
    const Constraint& o = cons[static_cast<std::size_t>(i)];
    if (o.scope == c.scope && o.maxSkew == c.maxSkew && o.when == c.when && o.minDomains == c.minDomains &&
        o.selector == c.selector)
      return i;
  }
  cons.push_back(std::move(c));
  bucket.push_back(static_cast<int>(cons.size() - 1));
  return bucket.back();
}

int DomainBuilder::internScope(NodeScope s) {
  std::size_t hsh = std::hash<std::string>()(s.topologyKey);
  hsh = mixHash(hsh, s.honorAffinity ? api::hashConstraints(s.affinity) : 1);
  hsh = mixHash(hsh, s.honorTaints ? s.tolerations.size() + 2 : 0);
  auto& bucket = scopesByHash_[hsh];
  for (int i : bucket)
    if (scopes_[static_cast<std::size_t>(i)] == s) return i;
  scopes_.push_back(std::move(s));
  eligible_.emplace_back();
  eligibleDone_.push_back(false);
  bucket.push_back(static_cast<int>(scopes_.size() - 1));
  return bucket.back();
}

const std::vector<std::optional<Symbol>>& DomainBuilder::valuesFor(const std::string& key) {
  auto [it, inserted] = valuesByKey_.try_emplace(key);
  if (inserted) {
    it->second.reserve(nodes_.size());
    for (const api::Node* n : nodes_) {
      std::optional<Symbol> v;
      for (const auto& [k, val] : n->labels)
        if (k.view() == key) v = val;
      it->second.push_back(v);
    }
  }
  return it->second;
}

// The cycle nodes that carry the key and pass the scope's inclusion policies.
const std::vector<DomainBuilder::EligibleNode>& DomainBuilder::eligibleNodes(int scope) {
  auto si = static_cast<std::size_t>(scope);
  if (eligibleDone_[si]) return eligible_[si];
  eligibleDone_[si] = true;
  const NodeScope& s = scopes_[si];
  const auto& values = valuesFor(s.topologyKey);
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    if (!values[n]) continue;
    if (s.honorAffinity && !api::podMatchesNodeSelectorAndAffinity(s.affinity, *nodes_[n])) continue;
    if (s.honorTaints && !api::toleratesNoScheduleNoExecute(s.tolerations, nodes_[n]->taints)) continue;
    eligible_[si].push_back({static_cast<int>(n), *values[n]});
  }
  return eligible_[si];
}

void DomainBuilder::count(int ci) {
  Constraint& c = ns_->constraint(ci);
  auto& entries = ns_->entries;
  for (const auto& en : eligibleNodes(c.scope)) {
    int d = c.domain(en.value, true);
    c.domainNodes[static_cast<std::size_t>(d)].push_back(en.node);
  }
  if (c.selector) {
    auto visit = [&](int ei) {
      PodEntry& e = entries[static_cast<std::size_t>(ei)];
      if (e.pod->isTerminating() || !c.selector->matches(e.pod->labels)) return;
      e.matched.push_back(ci);
      const auto& value = (*c.nodeValues)[static_cast<std::size_t>(e.node)];
      if (!value) return;
      int d = c.domain(*value, false);
      c.domainPods[static_cast<std::size_t>(d)].push_back(ei);
      e.counted.emplace_back(ci, d);
    };
    // The label index narrows the pods to look at; a selector it cannot narrow (or a small
    // namespace) is cheaper to check against the namespace's own pods.
    auto spans = framework::selectorCandidates(h_.snapshot(), *c.selector);
    std::size_t total = 0;
    for (const auto& sp : spans) total += sp.size();
    if (total > entries.size()) {
      for (std::size_t ei = 0; ei < entries.size(); ++ei) visit(static_cast<int>(ei));
    } else {
      for (const auto& sp : spans)
        for (const api::Pod* p : sp)
          if (auto it = entryIndex_.find(p); it != entryIndex_.end()) visit(it->second);
    }
  }
  c.countedDomains = static_cast<int>(c.domainValue.size());
  for (int d = 0; d < c.countedDomains; ++d) {
    auto& pods = c.domainPods[static_cast<std::size_t>(d)];
    std::sort(pods.begin(), pods.end());
    int n = static_cast<int>(pods.size());
    c.initial.push_back(n);
    c.live.add(d, n);
    c.countedPods += n;
  }
}

}  // namespace kdesched::plugins::topologyspread
