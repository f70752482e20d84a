#include "pkg/plugins/topologyspread/balancing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ranges>
#include <tuple>

#include "pkg/base/log.h"
#include "pkg/framework/nodefit.h"

namespace kdesched::plugins::topologyspread {
namespace {

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

std::string formatAverage(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

// --- Placements -----------------------------------------------------------------------------------

int Placements::templateOf(PodEntry& e) {
  if (e.templ >= 0) return e.templ;
  const api::Pod& p = *e.pod;
  std::size_t hsh = p.ns.hash();
  for (const auto& [k, v] : p.labels) hsh = mixHash(mixHash(hsh, k.hash()), v.hash());
  for (const auto& [r, q] : p.requests) hsh = mixHash(mixHash(hsh, r.hash()), std::hash<std::int64_t>()(q));
  auto [hc, inserted] = specHash_.try_emplace(p.scheduling.get(), 0);
  if (inserted) hc->second = api::hashConstraints(p.constraints());
  hsh = mixHash(hsh, hc->second);
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

bool Placements::fits(PodEntry& e, int n) {
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

bool Placements::roomFor(const api::Pod& pod, int n) const {
  // Upstream checks every candidate against the unchanged cluster (compat cumulativeFit: upstream).
  if (!h_.state().compat().cumulativeFit) return true;
  auto it = free_.find(n);
  if (it == free_.end()) return true;
  if (it->second.get(api::kPods()) < 1000) return false;
  for (const auto& [res, amount] : pod.requests)
    if (amount > 0 && amount > it->second.get(res)) return false;
  return true;
}

void Placements::reserve(const api::Pod& pod, int n) {
  auto [it, inserted] = free_.try_emplace(n);
  if (inserted) {
    const api::Node& node = *nodes_[static_cast<std::size_t>(n)];
    it->second = node.allocatable;
    for (const auto& [res, amount] : framework::nodeRequestedResources(h_, node)) it->second.add(res, -amount);
  }
  for (const auto& [res, amount] : pod.requests) it->second.add(res, -amount);
  it->second.add(api::kPods(), -1000);
}

// --- ConstraintBalancer ---------------------------------------------------------------------------

ConstraintBalancer::ConstraintBalancer(const framework::Handle& h, const Args& args, NamespaceDomains& ns, int k,
                                       Placements& placements, std::vector<Candidate>& candidates)
    : h_(h),
      args_(args),
      ns_(ns),
      k_(k),
      c_(ns.constraint(k)),
      placements_(placements),
      candidates_(candidates),
      changes_(ns.constraints.size(), 0) {}

void ConstraintBalancer::run() {
  const int domains = c_.countedDomains;
  if (domains == 0) return;
  // Upstream's "balanced": max - min <= maxSkew over all domains, empty ones included.
  skewBefore_ = c_.initialSkew();
  if (skewBefore_ <= c_.maxSkew) {
    skipUnchosen();
    return;
  }

  idealAvg_ = static_cast<double>(c_.countedPods) / domains;
  size_ = c_.initial;
  orderDomains();
  rankPods();
  findBelowAverage();

  std::size_t i = 0, j = order_.size() - 1;
  while (i < j) {
    // Upstream's arithmetic, quirks included: j steps back once without re-checking i < j.
    if (size_[order_[j]] <= idealAvg_) --j;
    int di = order_[i], dj = order_[j];
    int skew = size_[dj] - size_[di];
    if (skew <= c_.maxSkew) {
      ++i;
      continue;
    }
    double aboveAvg = std::ceil(size_[dj] - idealAvg_);
    double belowAvg = std::ceil(idealAvg_ - size_[di]);
    double halfSkew = std::ceil((skew - c_.maxSkew) / 2.0);
    int move = static_cast<int>(std::min(std::min(aboveAvg, belowAvg), halfSkew));
    // With fewer eligible domains than minDomains the scheduler measures skew from 0, so a
    // domain cannot take pods past maxSkew: moving more would only leave them Pending.
    if (c_.minDomainsUnmet()) move = std::min(move, c_.maxSkew - size_[di]);
    if (move <= 0) {
      ++i;
      continue;
    }
    moveBetween(di, dj, move);
  }
  skipUnchosen();
}

// Skip: a pod the constraint counts and did not choose, said with the skew and its domain.
struct ConstraintBalancer::NotChosen {
  const ConstraintBalancer* balancer;
  int domain;
  std::string text() const { return balancer->whyNotChosen(domain); }
};

std::string ConstraintBalancer::whyNotChosen(int d) const {
  if (c_.description.empty()) c_.description = describe(c_);
  const std::string head = c_.description + " skew " + std::to_string(skewBefore_);
  const std::string domain = "its domain " + c_.domainValue[static_cast<std::size_t>(d)].str() + " holds " +
                             std::to_string(c_.initial[static_cast<std::size_t>(d)]);
  if (skewBefore_ <= c_.maxSkew)
    return "skew within maxSkew: " + head + " <= maxSkew " + std::to_string(c_.maxSkew) + "; " + domain;
  return "not chosen: " + head + " > maxSkew " + std::to_string(c_.maxSkew) + "; " + domain +
         ", the balancing moves other pods (ideal average " + formatAverage(idealAvg_) + ")";
}

// The pods this constraint counts and did not choose are skipped (walked only when someone reads).
void ConstraintBalancer::skipUnchosen() const {
  auto notChosen = [this](const api::Pod* pod) {
    return std::none_of(candidates_.begin(), candidates_.end(), [&](const Candidate& c) { return c.pod == pod; });
  };
  for (int d = 0; d < c_.countedDomains; ++d) {
    auto pods = c_.domainPods[static_cast<std::size_t>(d)] |
                std::views::transform([this](int ei) { return ns_.entry(ei).pod; }) | std::views::filter(notChosen);
    h_.skipEach(pods, NotChosen{this, d});
  }
}

// Ascending by size; ties by domain value so the plan does not depend on hash order. The largest
// and smallest domains as found are named in reasons.
void ConstraintBalancer::orderDomains() {
  order_.resize(static_cast<std::size_t>(c_.countedDomains));
  for (int d = 0; d < c_.countedDomains; ++d) order_[static_cast<std::size_t>(d)] = d;
  std::sort(order_.begin(), order_.end(), [&](int a, int b) {
    if (size_[a] != size_[b]) return size_[a] < size_[b];
    return c_.domainValue[a].view() < c_.domainValue[b].view();
  });
  maxD_ = order_.back();
  minD_ = order_.front();
  for (int d : order_)
    if (size_[d] == size_[maxD_] && c_.domainValue[d].view() < c_.domainValue[maxD_].view()) maxD_ = d;
}

// Pods are taken from the end of each list: first those without nodeSelector/affinity, and among
// them the highest priority (upstream's order; its unstable sort becomes a stable one over pod
// names). Upstream puts non-evictable pods first; every listed pod passed Filter.
void ConstraintBalancer::rankPods() {
  lists_.assign(c_.domainPods.begin(), c_.domainPods.begin() + c_.countedDomains);
  auto rank = [&](int ei) {
    const api::Pod& p = *ns_.entry(ei).pod;
    return std::make_tuple(p.constraints().hasNodeAffinityOrSelector() ? 0 : 1, p.priority.has_value() ? 1 : 0,
                           p.priority.value_or(0));
  };
  for (auto& l : lists_) std::stable_sort(l.begin(), l.end(), [&](int a, int b) { return rank(a) < rank(b); });
}

void ConstraintBalancer::findBelowAverage() {
  for (int d : order_) {
    if (size_[d] >= idealAvg_) continue;
    below_.nodes.insert(below_.nodes.end(), c_.domainNodes[d].begin(), c_.domainNodes[d].end());
    below_.domains.insert(below_.domains.end(), c_.domainNodes[d].size(), d);
  }
}

// Moves `move` pods from domain dj to domain di in the bookkeeping, taking them from the end of
// the domain's list as upstream does, but only pods that can move now (evaluate()):
//  1. pods chosen for an earlier constraint that are headed for a node of di: their move is
//     planned where this constraint wants it, at no further eviction;
//  2. walking from the end, pods that can move (with the fit check off, those that fit some
//     below-average node first). They are planned lowest rank first, the order upstream takes
//     them in; one that can no longer move once the pods before it have used the room is
//     protected, and the next pod that can move goes instead. The walk does not go back to a pod
//     it passed over, though the moves planned since may have let it move: so each pod is tested
//     at most once per walk (and once more when planned), which bounds a move's cost;
//  3. when too few can move, protected pods from the end make up the count: upstream's
//     bookkeeping moves them too (without evicting them), so the loop always ends.
void ConstraintBalancer::moveBetween(int di, int dj, int move) {
  auto& list = lists_[static_cast<std::size_t>(dj)];
  const auto want = static_cast<std::size_t>(move);
  Walk w{list, di, list.size(), {}, 0, std::vector<char>(list.size(), 0)};
  std::size_t moved = takeChosenHeadedTo(w, move);
  std::vector<std::size_t> picked;
  while (moved + picked.size() < want) {
    auto x = nextPick(w);
    if (!x) break;
    w.taken[*x] = 1;
    picked.push_back(*x);
  }
  for (auto it = picked.rbegin(); it != picked.rend(); ++it) {
    for (std::optional<std::size_t> x = *it; x; x = nextPick(w)) {
      w.taken[*x] = 1;
      if (plan(list[*x], di)) {
        ++moved;
        break;
      }
      w.taken[*x] = 0;  // protected now: only filler from here on
    }
  }
  for (std::size_t x = list.size(); moved < want && x > 0; --x) {
    if (w.taken[x - 1]) continue;
    w.taken[x - 1] = 1;
    ++moved;
  }

  std::size_t kept = 0;
  for (std::size_t x = 0; x < list.size(); ++x)
    if (!w.taken[x]) list[kept++] = list[x];
  list.resize(kept);
  size_[dj] -= move;
  size_[di] += move;
}

// Takes, highest rank first, up to `move` pods chosen for an earlier constraint whose planned node
// lies in the domain this move fills.
std::size_t ConstraintBalancer::takeChosenHeadedTo(Walk& w, int move) {
  std::size_t taken = 0;
  // Upstream balances each constraint from its own ranking (compat movesSharedAcrossConstraints:
  // upstream).
  if (!h_.state().compat().movesSharedAcrossConstraints) return taken;
  for (std::size_t x = w.list.size(); x > 0 && taken < static_cast<std::size_t>(move); --x) {
    const PodEntry& e = ns_.entry(w.list[x - 1]);
    if (!e.chosen || e.target < 0) continue;
    const auto& value = (*c_.nodeValues)[static_cast<std::size_t>(e.target)];
    if (!value || c_.findDomain(*value) != w.toDomain) continue;
    w.taken[x - 1] = 1;
    ++taken;
  }
  return taken;
}

// The next pod the walk takes: going down from the end, the next one that can move; once the
// whole list is walked, those that fit no below-average node (fit check off), highest first.
// Nothing when only protected pods are left.
std::optional<std::size_t> ConstraintBalancer::nextPick(Walk& w) {
  while (w.next > 0) {
    std::size_t x = --w.next;
    if (w.taken[x]) continue;
    Tier tier = evaluate(w.list[x], w.toDomain).tier;
    if (tier == kMovable) return x;
    if (tier == kFitsNowhere) w.fitsNowhere.push_back(x);
  }
  while (w.fitsNowhereUsed < w.fitsNowhere.size()) {
    std::size_t x = w.fitsNowhere[w.fitsNowhereUsed++];
    if (!w.taken[x]) return x;
  }
  return std::nullopt;
}

ConstraintBalancer::Mobility ConstraintBalancer::evaluate(int ei, int toDomain) {
  PodEntry& e = ns_.entry(ei);
  // Already leaving for another constraint: taking it again costs no further eviction.
  if (e.chosen) return {kMovable, e.target};
  const std::uint64_t deps = depsOf(e);
  if (auto it = mobilities_.find(ei); it != mobilities_.end()) {
    const Memo& m = it->second;
    if (m.mobility.tier == kProtected ? m.deps == deps : m.planned == planned_ && m.toDomain == toDomain)
      return m.mobility;
  }
  Mobility v = judge(e, toDomain);
  mobilities_.insert_or_assign(ei, Memo{planned_, toDomain, deps, v});
  return v;
}

// Changes only grow, so the sum changes exactly when one of e's other constraints' counts did.
std::uint64_t ConstraintBalancer::depsOf(const PodEntry& e) const {
  std::uint64_t sum = 0;
  for (int ci : e.declared)
    if (ci != k_) sum += changes_[static_cast<std::size_t>(ci)];
  return sum;
}

// The test itself, the same for the partition and the target: taking e out of its domains must
// leave its other constraints intact and, with the fit check on, a below-average node must take
// it (fit, placement under its other hard constraints, room left after the planned moves).
ConstraintBalancer::Mobility ConstraintBalancer::judge(PodEntry& e, int toDomain) {
  if (!leavesOtherConstraintsIntact(e)) {
    log::debug("not moving pod: it would break another of its topology spread constraints",
               {{"pod", e.pod->key()}, {"plugin", kName}});
    return {kProtected, -1};
  }
  bool fits = fitsSomeBelowAverageNode(e);
  if (!args_.topologyBalanceNodeFit) return {fits ? kMovable : kFitsNowhere, -1};
  int target = fits ? findTarget(e, toDomain) : -1;
  if (target < 0) {
    log::debug("not moving pod: no below-average node can take it", {{"pod", e.pod->key()}, {"plugin", kName}});
    return {kProtected, -1};
  }
  return {kMovable, target};
}

// Plans ei's move toward toDomain if it can still move; true when it now counts as moved.
bool ConstraintBalancer::plan(int ei, int toDomain) {
  PodEntry& e = ns_.entry(ei);
  if (e.chosen) return true;
  Mobility v = evaluate(ei, toDomain);
  if (v.tier == kProtected) return false;
  choose(e, v.target, toDomain);
  return true;
}

// e becomes a candidate: it leaves its domains and lands on `target` (or, without one, in
// toDomain), for every constraint's counts; its requests are reserved there.
void ConstraintBalancer::choose(PodEntry& e, int target, int toDomain) {
  int from = e.countedDomain(k_);
  e.chosen = true;
  e.target = target;
  ++planned_;
  for (const auto& [ci, d] : e.counted) {
    ns_.constraint(ci).live.add(d, -1);
    ++changes_[static_cast<std::size_t>(ci)];
  }
  if (target >= 0) {
    for (int ci : e.matched) {
      Constraint& m = ns_.constraint(ci);
      const auto& value = (*m.nodeValues)[static_cast<std::size_t>(target)];
      if (!value) continue;
      m.live.add(m.domain(*value, false), +1);
      ++changes_[static_cast<std::size_t>(ci)];
    }
    placements_.reserve(*e.pod, target);
  } else {
    c_.live.add(toDomain, +1);
    ++changes_[static_cast<std::size_t>(k_)];
  }
  candidates_.push_back({e.pod, reason(from)});
}

// nodeFit alone, memoized per template: a pod fitting no below-average node needs no target search.
bool ConstraintBalancer::fitsSomeBelowAverageNode(PodEntry& e) {
  int t = placements_.templateOf(e);
  auto it = fitsBelow_.find(t);
  if (it == fitsBelow_.end()) {
    bool any = std::any_of(below_.nodes.begin(), below_.nodes.end(), [&](int n) { return placements_.fits(e, n); });
    it = fitsBelow_.emplace(t, any).first;
  }
  return it->second;
}

// Removing e from its domains must not push another of its own constraints (one the plugin
// balances, or any DoNotSchedule one) past maxSkew: the next cycle would evict to repair it.
bool ConstraintBalancer::leavesOtherConstraintsIntact(const PodEntry& e) {
  // Upstream balances each constraint alone (compat otherConstraintsRespected: upstream).
  if (!h_.state().compat().otherConstraintsRespected) return true;
  for (int ci : e.declared) {
    if (ci == k_) continue;
    Constraint& c = ns_.constraint(ci);
    if (!c.balanced && c.when != api::UnsatisfiableAction::DoNotSchedule) continue;
    int d = e.countedDomain(ci);
    if (d < 0) continue;
    int before = c.skew();
    c.live.add(d, -1);
    int after = c.skew();
    c.live.add(d, +1);
    if (after > c.maxSkew && after > before) return false;
  }
  return true;
}

std::vector<ConstraintBalancer::HardCheck> ConstraintBalancer::hardChecks(const PodEntry& e) {
  std::vector<HardCheck> out;
  if (!h_.state().compat().otherConstraintsRespected) return out;
  for (int ci : e.declared) {
    if (ci == k_) continue;
    Constraint& c = ns_.constraint(ci);
    if (c.when != api::UnsatisfiableAction::DoNotSchedule) continue;
    HardCheck hc{&c, c.selector && c.selector->matches(e.pod->labels) ? 1 : 0, e.countedDomain(ci), 0};
    if (hc.from >= 0) c.live.add(hc.from, -1);
    hc.globalMin = c.minDomainsUnmet() ? 0 : c.live.minEligible();
    if (hc.from >= 0) c.live.add(hc.from, +1);
    out.push_back(hc);
  }
  return out;
}

// A node without the key, or whose domain would exceed the global minimum by more than maxSkew,
// rejects the replacement.
bool ConstraintBalancer::hardChecksAllow(const std::vector<HardCheck>& checks, int n) {
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
int ConstraintBalancer::findTarget(PodEntry& e, int toDomain) {
  std::vector<HardCheck> checks = hardChecks(e);
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t x = 0; x < below_.nodes.size(); ++x) {
      if ((below_.domains[x] == toDomain) != (pass == 0)) continue;
      int n = below_.nodes[x];
      if (!placements_.fits(e, n) || !hardChecksAllow(checks, n) || !placements_.roomFor(*e.pod, n)) continue;
      return n;
    }
  }
  return -1;
}

// `{constraint} skew 3 (zone-a: 4, zone-b: 1) > maxSkew 1; moving this pod leaves skew 1`: the
// pod's domain and the largest and smallest as found, then the skew with the moves planned so
// far (this one included).
std::string ConstraintBalancer::reason(int from) const {
  std::vector<int> shown;
  for (int d : {from, maxD_, minD_})
    if (d >= 0 && std::find(shown.begin(), shown.end(), d) == shown.end()) shown.push_back(d);
  std::sort(shown.begin(), shown.end(), [&](int a, int b) {
    if (c_.initial[a] != c_.initial[b]) return c_.initial[a] > c_.initial[b];
    return c_.domainValue[a].view() < c_.domainValue[b].view();
  });
  if (c_.description.empty()) c_.description = describe(c_);
  std::string out = c_.description + " skew " + std::to_string(skewBefore_) + " (";
  for (std::size_t x = 0; x < shown.size(); ++x) {
    if (x) out += ", ";
    out += c_.domainValue[shown[x]].str() + ": " + std::to_string(c_.initial[shown[x]]);
  }
  if (c_.minDomainsUnmet())
    out += "; " + std::to_string(c_.eligibleDomains) + " eligible domains < minDomains " +
           std::to_string(c_.minDomains) + ", global minimum 0";
  out += ") > maxSkew " + std::to_string(c_.maxSkew) + "; moving this pod leaves skew " + std::to_string(c_.skew());
  return out;
}

}  // namespace kdesched::plugins::topologyspread
