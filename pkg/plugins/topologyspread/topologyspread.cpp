#include "pkg/plugins/topologyspread/topologyspread.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "pkg/api/scheduling.h"
#include "pkg/framework/nodefit.h"
#include "pkg/framework/selection.h"

namespace kdesched::plugins::topologyspread {
namespace {

using api::Symbol;
using api::UnsatisfiableAction;

std::size_t mix(std::size_t seed, std::size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// Per-domain pod counts with histograms of the counts, so the extremes stay O(log domains) as pods
// are planned to move (a hostname constraint has one domain per node).
class DomainCounts {
 public:
  void addDomain(bool eligible) {
    counts_.push_back(0);
    eligible_.push_back(eligible);
    bump(all_, 0, +1);
    if (eligible) bump(eligibleHist_, 0, +1);
  }
  void add(int d, int delta) {
    int& c = counts_[static_cast<std::size_t>(d)];
    bump(all_, c, -1);
    if (eligible_[static_cast<std::size_t>(d)]) bump(eligibleHist_, c, -1);
    c += delta;
    bump(all_, c, +1);
    if (eligible_[static_cast<std::size_t>(d)]) bump(eligibleHist_, c, +1);
  }
  int count(int d) const { return counts_[static_cast<std::size_t>(d)]; }
  int max() const { return all_.empty() ? 0 : all_.rbegin()->first; }
  int min() const { return all_.empty() ? 0 : all_.begin()->first; }
  int minEligible() const { return eligibleHist_.empty() ? 0 : eligibleHist_.begin()->first; }

 private:
  static void bump(std::map<int, int>& h, int value, int delta) {
    int& n = h[value];
    n += delta;
    if (n == 0) h.erase(value);
  }
  std::vector<int> counts_;
  std::vector<bool> eligible_;
  std::map<int, int> all_;
  std::map<int, int> eligibleHist_;
};

// Which nodes make a constraint's domains: the topology key plus, per inclusion policy, the
// declaring pod's required node affinity and tolerations (reference §2.4 step 3). Shared by every
// constraint with the same scope, so the node scan runs once per distinct scope in a cycle.
struct NodeScope {
  std::string topologyKey;
  bool honorAffinity = true;
  api::SchedulingConstraints affinity;  // only nodeSelector and nodeAffinity.required are set
  bool honorTaints = false;
  std::vector<api::Toleration> tolerations;
  bool operator==(const NodeScope&) const = default;
};

struct EligibleNode {
  int node;
  Symbol value;
};

// One deduplicated constraint of a namespace, in upstream's internal form, with its domains.
struct Constraint {
  const api::TopologySpreadConstraint* declared = nullptr;  // as first declared (for messages)
  std::int32_t maxSkew = 1;
  UnsatisfiableAction when = UnsatisfiableAction::DoNotSchedule;
  std::int32_t minDomains = 0;                 // 0: unset, or ScheduleAnyway (where it has no meaning)
  std::optional<api::LabelSelector> selector;  // merged with matchLabelKeys; unset selects nothing
  int scope = -1;
  const std::vector<std::optional<Symbol>>* nodeValues = nullptr;  // topology value per cycle node
  bool balanced = false;                                           // its whenUnsatisfiable is one the args act on

  // Domains pre-created from eligible nodes come first; pods on nodes failing the inclusion
  // policies add implicit ones, as upstream's map does; planned moves may add more to `live`.
  std::vector<Symbol> domainValue;
  std::unordered_map<Symbol, int> domainIndex;
  std::vector<std::vector<int>> domainNodes;  // eligible cycle-node indices
  std::vector<std::vector<int>> domainPods;   // pod entries counted, in pod-name order
  int eligibleDomains = 0;
  int countedDomains = 0;  // domains when counting finished: the ones balancing works on
  int countedPods = 0;
  std::vector<int> initial;  // counts as found
  DomainCounts live;         // counts with the moves planned so far
  std::string description;   // for reasons, built on first use

  int domain(const Symbol& value, bool eligible) {
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
  int findDomain(const Symbol& value) const {
    auto it = domainIndex.find(value);
    return it == domainIndex.end() ? -1 : it->second;
  }
  // kube-scheduler treats the global minimum as 0 while fewer eligible domains than minDomains
  // exist (minDomains only applies to DoNotSchedule).
  bool minDomainsUnmet() const { return when == UnsatisfiableAction::DoNotSchedule && minDomains > eligibleDomains; }
  int skew() const { return live.max() - (minDomainsUnmet() ? 0 : live.min()); }
  int initialSkew() const {
    if (initial.empty()) return 0;
    auto [lo, hi] = std::minmax_element(initial.begin(), initial.end());
    return *hi - (minDomainsUnmet() ? 0 : *lo);
  }
  // Identity for balancing as upstream deduplicates it (its internal form has neither
  // whenUnsatisfiable nor minDomains).
  bool sameBalancing(const Constraint& o) const {
    return scope == o.scope && maxSkew == o.maxSkew && selector == o.selector;
  }
};

struct PodEntry {
  const api::Pod* pod = nullptr;
  int node = -1;
  int templ = -1;                            // fit template, assigned on first use
  std::vector<int> declared;                 // constraints this pod declares
  std::vector<int> matched;                  // constraints whose selector matches this pod
  std::vector<std::pair<int, int>> counted;  // (constraint, domain) this pod is counted in
  bool chosen = false;
};

struct Candidate {
  const api::Pod* pod;
  std::string reason;
};

std::string describe(const Constraint& c) {
  const api::TopologySpreadConstraint& d = *c.declared;
  std::string out = "topologySpreadConstraint {topologyKey: " + d.topologyKey +
                    ", maxSkew: " + std::to_string(c.maxSkew) +
                    ", whenUnsatisfiable: " + std::string(toString(c.when)) + ", labelSelector: ";
  out += !c.selector ? "<none>" : c.selector->empty() ? "{}" : c.selector->toString();
  if (c.minDomains > 0) out += ", minDomains: " + std::to_string(c.minDomains);
  if (d.nodeAffinityPolicy == api::InclusionPolicy::Ignore) out += ", nodeAffinityPolicy: Ignore";
  if (d.nodeTaintsPolicy == api::InclusionPolicy::Honor) out += ", nodeTaintsPolicy: Honor";
  return out + "}";
}

class Planner {
 public:
  Planner(const framework::Handle& h, const Args& args) : h_(h), args_(args), nodes_(h.nodes()) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) nodeIndex_.emplace(nodes_[i]->nameSym, static_cast<int>(i));
  }

  // `pods`: all snapshot pods of one namespace, in name order.
  void planNamespace(std::span<const api::Pod* const> pods) {
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
    if (!anyBalanced) return;

    entries_.clear();
    entryIndex_.clear();
    cons_.clear();
    consByKey_.clear();
    declaredCache_.clear();
    for (const auto& [p, node] : listed) {
      if (!h_.filter(*p).ok) continue;
      entryIndex_.emplace(p, static_cast<int>(entries_.size()));
      PodEntry e;
      e.pod = p;
      e.node = node;
      entries_.push_back(std::move(e));
    }
    for (auto& e : entries_) e.declared = declaredConstraints(*e.pod);
    for (std::size_t ci = 0; ci < cons_.size(); ++ci) count(static_cast<int>(ci));

    std::vector<int> done;
    for (std::size_t ci = 0; ci < cons_.size(); ++ci) {
      Constraint& c = cons_[ci];
      if (!c.balanced) continue;
      bool duplicate = std::any_of(done.begin(), done.end(), [&](int o) { return cons_[o].sameBalancing(c); });
      if (duplicate) continue;
      done.push_back(static_cast<int>(ci));
      balanceConstraint(static_cast<int>(ci));
    }
  }

  const std::vector<Candidate>& candidates() const { return candidates_; }

 private:
  // --- constraint table -----------------------------------------------------------------------

  // The pod's constraints as namespace-table indices. Pods sharing a spec (and the values of the
  // labels their matchLabelKeys name) share the answer.
  std::vector<int> declaredConstraints(const api::Pod& pod) {
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

  Constraint makeConstraint(const api::TopologySpreadConstraint& tsc, const api::Pod& pod) {
    const auto& sc = pod.constraints();
    Constraint c;
    c.declared = &tsc;
    c.maxSkew = tsc.maxSkew;
    c.when = tsc.whenUnsatisfiable;
    if (c.when == UnsatisfiableAction::DoNotSchedule && tsc.minDomains) c.minDomains = *tsc.minDomains;
    if (tsc.labelSelector) {
      // As kube-scheduler: matchLabelKeys become key=<this pod's value> requirements, for the
      // keys the pod has. A constraint without a labelSelector selects nothing either way.
      api::LabelSelector sel;
      for (const auto& k : tsc.matchLabelKeys) {
        auto v = pod.labels.get(k);
        if (!v) continue;
        std::pair<std::string, std::string> kv{k, std::string(*v)};
        bool dup = std::find(sel.matchLabels.begin(), sel.matchLabels.end(), kv) != sel.matchLabels.end() ||
                   std::find(tsc.labelSelector->matchLabels.begin(), tsc.labelSelector->matchLabels.end(), kv) !=
                       tsc.labelSelector->matchLabels.end();
        if (!dup) sel.matchLabels.push_back(std::move(kv));
      }
      sel.matchLabels.insert(sel.matchLabels.end(), tsc.labelSelector->matchLabels.begin(),
                             tsc.labelSelector->matchLabels.end());
      sel.matchExpressions = tsc.labelSelector->matchExpressions;
      c.selector = std::move(sel);
    }
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

  int intern(Constraint c) {
    std::string key = std::to_string(c.scope) + '|' + std::to_string(c.maxSkew) + '|' +
                      std::to_string(static_cast<int>(c.when)) + '|' + std::to_string(c.minDomains) + '|' +
                      (c.selector ? "s:" + c.selector->toString() : "nil");
    auto& bucket = consByKey_[key];
    for (int i : bucket) {
      const Constraint& o = cons_[static_cast<std::size_t>(i)];
      if (o.scope == c.scope && o.maxSkew == c.maxSkew && o.when == c.when && o.minDomains == c.minDomains &&
          o.selector == c.selector)
        return i;
    }
    cons_.push_back(std::move(c));
    bucket.push_back(static_cast<int>(cons_.size() - 1));
    return bucket.back();
  }

  int internScope(NodeScope s) {
    std::size_t hsh = std::hash<std::string>()(s.topologyKey);
    hsh = mix(hsh, s.honorAffinity ? api::hashConstraints(s.affinity) : 1);
    hsh = mix(hsh, s.honorTaints ? s.tolerations.size() + 2 : 0);
    auto& bucket = scopesByHash_[hsh];
    for (int i : bucket)
      if (scopes_[static_cast<std::size_t>(i)] == s) return i;
    scopes_.push_back(std::move(s));
    eligible_.emplace_back();
    eligibleDone_.push_back(false);
    bucket.push_back(static_cast<int>(scopes_.size() - 1));
    return bucket.back();
  }

  const std::vector<std::optional<Symbol>>& valuesFor(const std::string& key) {
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
  const std::vector<EligibleNode>& eligibleNodes(int scope) {
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

  // --- counting -------------------------------------------------------------------------------

  void count(int ci) {
    Constraint& c = cons_[static_cast<std::size_t>(ci)];
    for (const auto& en : eligibleNodes(c.scope)) {
      int d = c.domain(en.value, true);
      c.domainNodes[static_cast<std::size_t>(d)].push_back(en.node);
    }
    if (c.selector) {
      auto visit = [&](int ei) {
        PodEntry& e = entries_[static_cast<std::size_t>(ei)];
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
      if (total > entries_.size()) {
        for (std::size_t ei = 0; ei < entries_.size(); ++ei) visit(static_cast<int>(ei));
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

  // --- fit ------------------------------------------------------------------------------------

  // Pods with the same namespace, labels, requests and scheduling spec fit the same nodes, so
  // nodeFit is computed once per (template, node) instead of inside a sort comparator.
  int templateOf(PodEntry& e) {
    if (e.templ >= 0) return e.templ;
    const api::Pod& p = *e.pod;
    std::size_t hsh = p.ns.hash();
    for (const auto& [k, v] : p.labels) hsh = mix(mix(hsh, k.hash()), v.hash());
    for (const auto& [r, q] : p.requests) hsh = mix(mix(hsh, r.hash()), std::hash<std::int64_t>()(q));
    auto [hc, inserted] = specHash_.try_emplace(p.scheduling.get(), 0);
    if (inserted) hc->second = api::hashConstraints(p.constraints());
    hsh = mix(hsh, hc->second);
    auto& bucket = templByHash_[hsh];
    for (int t : bucket) {
      const api::Pod& r = *templReps_[static_cast<std::size_t>(t)];
      if (r.ns == p.ns && r.labels == p.labels && r.requests == p.requests &&
          (r.scheduling == p.scheduling || r.constraints() == p.constraints()))
        return e.templ = t;
    }
    templReps_.push_back(&p);
    bucket.push_back(static_cast<int>(templReps_.size() - 1));
    return e.templ = bucket.back();
  }

  // nodeFit for a pod of e's template that is not on node n yet (never e's own node).
  bool fitsOn(PodEntry& e, int n) {
    if (e.node == n) return false;
    int t = templateOf(e);
    std::uint64_t key = static_cast<std::uint64_t>(t) * nodes_.size() + static_cast<std::uint64_t>(n);
    if (auto it = fitMemo_.find(key); it != fitMemo_.end()) return it->second;
    const api::Node& node = *nodes_[static_cast<std::size_t>(n)];
    // The representative skips the resource check on its own node; probe with e there instead.
    const api::Pod* rep = templReps_[static_cast<std::size_t>(t)];
    const api::Pod& probe = rep->nodeName == node.nameSym ? *e.pod : *rep;
    bool fits = framework::nodeFit(h_, probe, node).fits;
    fitMemo_.emplace(key, fits);
    return fits;
  }

  // Room left on n once the pods already planned to land there are counted (nodeFit alone sees
  // the node as it is, so it would send every candidate to the same last free slot). Nodes
  // without planned arrivals are as nodeFit saw them.
  bool roomFor(const api::Pod& pod, int n) const {
    auto it = free_.find(n);
    if (it == free_.end()) return true;
    if (it->second.get(api::kPods()) < 1000) return false;
    for (const auto& [res, amount] : pod.requests)
      if (amount > 0 && amount > it->second.get(res)) return false;
    return true;
  }

  void reserve(const api::Pod& pod, int n) {
    auto [it, inserted] = free_.try_emplace(n);
    if (inserted) {
      const api::Node& node = *nodes_[static_cast<std::size_t>(n)];
      it->second = node.allocatable;
      for (const auto& [res, amount] : framework::nodeRequestedResources(h_, node)) it->second.add(res, -amount);
    }
    for (const auto& [res, amount] : pod.requests) it->second.add(res, -amount);
    it->second.add(api::kPods(), -1000);
  }

  static int countedDomain(const PodEntry& e, int ci) {
    for (const auto& [c, d] : e.counted)
      if (c == ci) return d;
    return -1;
  }

  // Removing e from its domains must not push another of its own constraints (one the plugin
  // balances, or any DoNotSchedule one) past maxSkew: the next cycle would evict to repair it.
  bool leavesOtherConstraintsIntact(const PodEntry& e, int balancing) {
    for (int ci : e.declared) {
      if (ci == balancing) continue;
      Constraint& c = cons_[static_cast<std::size_t>(ci)];
      if (!c.balanced && c.when != UnsatisfiableAction::DoNotSchedule) continue;
      int d = countedDomain(e, ci);
      if (d < 0) continue;
      int before = c.skew();
      c.live.add(d, -1);
      int after = c.skew();
      c.live.add(d, +1);
      if (after > c.maxSkew && after > before) return false;
    }
    return true;
  }

  // Eligible nodes of the domains below the ideal average, in upstream's nodesBelowIdealAvg
  // order (domains smallest first, then node name), with each node's domain.
  struct Below {
    std::vector<int> nodes;
    std::vector<int> domains;
  };

  // One of e's other DoNotSchedule constraints, as kube-scheduler's PodTopologySpread filter will
  // see it once e has left its domain.
  struct HardCheck {
    const Constraint* c;
    int self;       // 1 when e matches the constraint's own selector
    int from;       // e's domain, -1 when e is not counted
    int globalMin;  // with e gone; 0 while minDomains is unmet
  };

  std::vector<HardCheck> hardChecks(const PodEntry& e, int balancing) {
    std::vector<HardCheck> out;
    for (int ci : e.declared) {
      if (ci == balancing) continue;
      Constraint& c = cons_[static_cast<std::size_t>(ci)];
      if (c.when != UnsatisfiableAction::DoNotSchedule) continue;
      HardCheck hc{&c, c.selector && c.selector->matches(e.pod->labels) ? 1 : 0, countedDomain(e, ci), 0};
      if (hc.from >= 0) c.live.add(hc.from, -1);
      hc.globalMin = c.minDomainsUnmet() ? 0 : c.live.minEligible();
      if (hc.from >= 0) c.live.add(hc.from, +1);
      out.push_back(hc);
    }
    return out;
  }

  // A node without the key, or whose domain would exceed the global minimum by more than maxSkew,
  // rejects the replacement.
  static bool hardChecksAllow(const std::vector<HardCheck>& checks, int n) {
    for (const HardCheck& hc : checks) {
      const auto& value = (*hc.c->nodeValues)[static_cast<std::size_t>(n)];
      if (!value) return false;
      int d = hc.c->findDomain(*value);
      int there = d < 0 ? 0 : hc.c->live.count(d) - (d == hc.from ? 1 : 0);
      if (there + hc.self - hc.globalMin > hc.c->maxSkew) return false;
    }
    return true;
  }

  // A below-average node e can move to: it fits, still has room after the moves planned so far,
  // and e's other hard constraints allow it. Nodes of the domain the balancing moves the pod to
  // come first (the scheduler fills the smallest domain), then upstream's nodesBelowIdealAvg order.
  int findTarget(PodEntry& e, int balancing, int toDomain, const Below& below) {
    std::vector<HardCheck> checks = hardChecks(e, balancing);
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t x = 0; x < below.nodes.size(); ++x) {
        if ((below.domains[x] == toDomain) != (pass == 0)) continue;
        int n = below.nodes[x];
        if (!fitsOn(e, n) || !hardChecksAllow(checks, n) || !roomFor(*e.pod, n)) continue;
        return n;
      }
    }
    return -1;
  }

  // --- balancing ------------------------------------------------------------------------------

  void balanceConstraint(int k) {
    Constraint& c = cons_[static_cast<std::size_t>(k)];
    const int domains = c.countedDomains;
    if (domains == 0) return;
    // Upstream's "balanced": max - min <= maxSkew over all domains, empty ones included.
    int skewBefore = c.initialSkew();
    if (skewBefore <= c.maxSkew) return;

    const double idealAvg = static_cast<double>(c.countedPods) / domains;
    std::vector<int> size(c.initial);
    std::vector<int> order(static_cast<std::size_t>(domains));
    for (int d = 0; d < domains; ++d) order[static_cast<std::size_t>(d)] = d;
    // Ascending by size; ties by domain value so the plan does not depend on hash order.
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      if (size[a] != size[b]) return size[a] < size[b];
      return c.domainValue[a].view() < c.domainValue[b].view();
    });

    // Pods are taken from the end of each list: first those without nodeSelector/affinity, and
    // among them the highest priority (upstream's order; its unstable sort becomes a stable one
    // over pod names). Upstream puts non-evictable pods first; every listed pod passed Filter.
    std::vector<std::vector<int>> lists(c.domainPods.begin(), c.domainPods.begin() + domains);
    auto rank = [&](int ei) {
      const api::Pod& p = *entries_[static_cast<std::size_t>(ei)].pod;
      return std::make_tuple(p.constraints().hasNodeAffinityOrSelector() ? 0 : 1, p.priority.has_value() ? 1 : 0,
                             p.priority.value_or(0));
    };
    for (auto& l : lists) std::stable_sort(l.begin(), l.end(), [&](int a, int b) { return rank(a) < rank(b); });

    Below below;
    for (int d : order) {
      if (size[d] >= idealAvg) continue;
      below.nodes.insert(below.nodes.end(), c.domainNodes[d].begin(), c.domainNodes[d].end());
      below.domains.insert(below.domains.end(), c.domainNodes[d].size(), d);
    }

    int maxD = order.back(), minD = order.front();
    for (int d : order)
      if (size[d] == size[maxD] && c.domainValue[d].view() < c.domainValue[maxD].view()) maxD = d;

    std::unordered_map<int, bool> fitsBelow;  // per template, for this constraint's below-average nodes
    auto movable = [&](int ei) {
      PodEntry& e = entries_[static_cast<std::size_t>(ei)];
      // Already leaving for another constraint: taking it again costs no further eviction.
      if (e.chosen) return true;
      int t = templateOf(e);
      auto it = fitsBelow.find(t);
      if (it == fitsBelow.end()) {
        bool any = std::any_of(below.nodes.begin(), below.nodes.end(), [&](int n) { return fitsOn(e, n); });
        it = fitsBelow.emplace(t, any).first;
      }
      return it->second && leavesOtherConstraintsIntact(e, k);
    };

    std::size_t i = 0, j = order.size() - 1;
    while (i < j) {
      // Upstream's arithmetic, quirks included: j steps back once without re-checking i < j.
      if (size[order[j]] <= idealAvg) --j;
      int di = order[i], dj = order[j];
      int skew = size[dj] - size[di];
      if (skew <= c.maxSkew) {
        ++i;
        continue;
      }
      double aboveAvg = std::ceil(size[dj] - idealAvg);
      double belowAvg = std::ceil(idealAvg - size[di]);
      double halfSkew = std::ceil((skew - c.maxSkew) / 2.0);
      int move = static_cast<int>(std::min(std::min(aboveAvg, belowAvg), halfSkew));
      // With fewer eligible domains than minDomains the scheduler measures skew from 0, so a
      // domain cannot take pods past maxSkew: moving more would only leave them Pending.
      if (c.minDomainsUnmet()) move = std::min(move, c.maxSkew - size[di]);
      if (move <= 0) {
        ++i;
        continue;
      }

      auto& list = lists[static_cast<std::size_t>(dj)];
      std::vector<char> key(list.size());
      for (std::size_t x = 0; x < list.size(); ++x) key[x] = movable(list[x]) ? 1 : 0;
      std::vector<int> sorted;
      sorted.reserve(list.size());
      for (int pass = 0; pass < 2; ++pass)
        for (std::size_t x = 0; x < list.size(); ++x)
          if (key[x] == pass) sorted.push_back(list[x]);
      list = std::move(sorted);

      for (std::size_t x = list.size() - static_cast<std::size_t>(move); x < list.size(); ++x)
        consider(k, list[x], di, below, skewBefore, maxD, minD);
      list.resize(list.size() - static_cast<std::size_t>(move));
      size[dj] -= move;
      size[di] += move;
    }
  }

  // One pod taken from the large domain: becomes a candidate unless it is protected. Either way
  // it counts as moved, as upstream's bookkeeping does.
  void consider(int k, int ei, int toDomain, const Below& below, int skewBefore, int maxD, int minD) {
    PodEntry& e = entries_[static_cast<std::size_t>(ei)];
    if (e.chosen) return;
    if (!leavesOtherConstraintsIntact(e, k)) {
      spdlog::debug(
          "msg=\"not moving pod: it would break another of its topology spread constraints\" pod={} plugin={}",
          e.pod->key(), kName);
      return;
    }
    int target = -1;
    if (args_.topologyBalanceNodeFit) {
      target = findTarget(e, k, toDomain, below);
      if (target < 0) {
        spdlog::debug("msg=\"not moving pod: no below-average node can take it\" pod={} plugin={}", e.pod->key(),
                      kName);
        return;
      }
    }
    Constraint& c = cons_[static_cast<std::size_t>(k)];
    int from = countedDomain(e, k);
    e.chosen = true;
    for (const auto& [ci, d] : e.counted) cons_[static_cast<std::size_t>(ci)].live.add(d, -1);
    if (target >= 0) {
      for (int ci : e.matched) {
        Constraint& m = cons_[static_cast<std::size_t>(ci)];
        const auto& value = (*m.nodeValues)[static_cast<std::size_t>(target)];
        if (value) m.live.add(m.domain(*value, false), +1);
      }
      reserve(*e.pod, target);
    } else {
      c.live.add(toDomain, +1);
    }
    candidates_.push_back({e.pod, reason(c, from, maxD, minD, skewBefore)});
  }

  // `{constraint} skew 3 (zone-a: 4, zone-b: 1) > maxSkew 1; moving this pod leaves skew 1`:
  // the pod's domain and the largest and smallest as found, then the skew with the moves planned
  // so far (this one included).
  std::string reason(Constraint& c, int from, int maxD, int minD, int skewBefore) const {
    std::vector<int> shown;
    for (int d : {from, maxD, minD})
      if (d >= 0 && std::find(shown.begin(), shown.end(), d) == shown.end()) shown.push_back(d);
    std::sort(shown.begin(), shown.end(), [&](int a, int b) {
      if (c.initial[a] != c.initial[b]) return c.initial[a] > c.initial[b];
      return c.domainValue[a].view() < c.domainValue[b].view();
    });
    if (c.description.empty()) c.description = describe(c);
    std::string out = c.description + " skew " + std::to_string(skewBefore) + " (";
    for (std::size_t x = 0; x < shown.size(); ++x) {
      if (x) out += ", ";
      out += c.domainValue[shown[x]].str() + ": " + std::to_string(c.initial[shown[x]]);
    }
    if (c.minDomainsUnmet())
      out += "; " + std::to_string(c.eligibleDomains) + " eligible domains < minDomains " +
             std::to_string(c.minDomains) + ", global minimum 0";
    out += ") > maxSkew " + std::to_string(c.maxSkew) + "; moving this pod leaves skew " + std::to_string(c.skew());
    return out;
  }

  const framework::Handle& h_;
  const Args& args_;
  const std::vector<const api::Node*>& nodes_;
  std::unordered_map<Symbol, int> nodeIndex_;

  // Per namespace.
  std::vector<PodEntry> entries_;
  std::unordered_map<const api::Pod*, int> entryIndex_;
  std::vector<Constraint> cons_;
  std::unordered_map<std::string, std::vector<int>> consByKey_;
  struct PairHash {
    std::size_t operator()(const std::pair<const api::SchedulingConstraints*, std::string>& k) const noexcept {
      return mix(std::hash<const void*>()(k.first), std::hash<std::string>()(k.second));
    }
  };
  std::unordered_map<std::pair<const api::SchedulingConstraints*, std::string>, std::vector<int>, PairHash>
      declaredCache_;

  // Per cycle.
  std::vector<NodeScope> scopes_;
  std::unordered_map<std::size_t, std::vector<int>> scopesByHash_;
  std::vector<std::vector<EligibleNode>> eligible_;
  std::vector<bool> eligibleDone_;
  std::unordered_map<std::string, std::vector<std::optional<Symbol>>> valuesByKey_;
  std::unordered_map<const api::SchedulingConstraints*, std::size_t> specHash_;
  std::unordered_map<std::size_t, std::vector<int>> templByHash_;
  std::vector<const api::Pod*> templReps_;
  std::unordered_map<std::uint64_t, bool> fitMemo_;
  std::unordered_map<int, api::ResourceList> free_;  // nodes with planned arrivals: room left
  std::vector<Candidate> candidates_;
};

}  // namespace

Status RemovePodsViolatingTopologySpreadConstraint::balance(framework::Handle& h) {
  Planner planner(h, args_);
  // Snapshot pods are sorted by namespace/name, so each namespace is one contiguous run.
  const auto& pods = h.snapshot().pods();
  for (std::size_t begin = 0; begin < pods.size();) {
    std::size_t end = begin;
    while (end < pods.size() && pods[end]->ns == pods[begin]->ns) ++end;
    planner.planNamespace(std::span<const api::Pod* const>(pods.data() + begin, end - begin));
    begin = end;
  }

  // Upstream walks its candidate set in Go map order (random); kdesched evicts in the order the
  // pods were chosen: namespace, constraint, then the balancing loop's order.
  std::unordered_set<Symbol> nodeLimited;
  for (const Candidate& cand : planner.candidates()) {
    if (nodeLimited.count(cand.pod->nodeName)) continue;
    framework::EvictResult res = h.evict(*cand.pod, cand.reason);
    if (res.refusal == framework::Refusal::NodeLimit) nodeLimited.insert(cand.pod->nodeName);
    if (res.refusal == framework::Refusal::TotalLimit) return Status::ok();
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  return {kName,
          [](const policy::RawArgs& raw, const framework::BuildContext&) -> Result<std::unique_ptr<framework::Plugin>> {
            auto args = decodeArgs(raw);
            if (!args.isOk()) return args.status();
            return std::unique_ptr<framework::Plugin>(
                std::make_unique<RemovePodsViolatingTopologySpreadConstraint>(std::move(args.value())));
          }};
}

}  // namespace kdesched::plugins::topologyspread
