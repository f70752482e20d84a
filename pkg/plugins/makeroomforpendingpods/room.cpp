#include "pkg/plugins/makeroomforpendingpods/room.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <tuple>

#include "pkg/framework/nodefit.h"
#include "pkg/framework/spread_fit.h"
#include "pkg/plugins/makeroomforpendingpods/pending.h"

namespace kdesched::plugins::makeroomforpendingpods {
namespace {

// nodeFit's checks that moving pods can change: the pod count and the requested resources. Every
// other check failing (affinity, selectors, taints, cordon, anti-affinity) rules the node out.
bool isCapacityCheck(const std::string& check) {
  return check == "too many pods" || check.rfind("insufficient ", 0) == 0;
}

// What the pending pod lacks on a node: each requested resource beyond what is left, and a slot.
struct Shortfall {
  std::vector<std::pair<api::Symbol, std::int64_t>> need;
  bool podSlot = false;
};

Shortfall shortfallOn(const framework::Handle& h, const api::Pod& pod, const api::ResourceList& free) {
  Shortfall s;
  const bool skipZero = h.state().compat().zeroRequestSkipsResource;
  for (const auto& [res, amount] : pod.requests) {
    if (amount < 0 || (amount == 0 && skipZero) || res == api::kPods()) continue;
    if (amount > free.get(res)) s.need.emplace_back(res, amount - free.get(res));
  }
  s.podSlot = free.get(api::kPods()) < 1000;
  return s;
}

bool covers(const Shortfall& s, const std::vector<const api::Pod*>& pods) {
  if (pods.empty()) return s.need.empty() && !s.podSlot;
  for (const auto& [res, amount] : s.need) {
    std::int64_t freed = 0;
    for (const api::Pod* p : pods) freed += std::max<std::int64_t>(p->requests.get(res), 0);
    if (freed < amount) return false;
  }
  return true;
}

// The largest share of one lacking resource the pod frees (1 when only a slot is lacking).
double shareOf(const Shortfall& s, const api::Pod& pod) {
  double best = s.need.empty() ? 1.0 : 0.0;
  for (const auto& [res, amount] : s.need)
    best = std::max(
        best, static_cast<double>(std::max<std::int64_t>(pod.requests.get(res), 0)) / static_cast<double>(amount));
  return best;
}

// One set of moves that covers the shortfall on a node, with what ranks it.
struct Option {
  const api::Node* node;
  std::vector<const api::Pod*> pods;
  std::int32_t highestPriority;
  api::Timestamp agesLost;  // the moved pods' ages summed: the youngest lose least
  auto rank() const { return std::make_tuple(pods.size(), highestPriority, agesLost); }
};

api::Timestamp ageOf(const api::Pod& pod, api::Timestamp now) {
  const auto since = pod.startTime ? pod.startTime : pod.creationTimestamp;
  return since ? std::max<api::Timestamp>(now - *since, 0) : 0;
}

bool before(const Option& a, const Option& b) {
  if (a.rank() != b.rank()) return a.rank() < b.rank();
  if (a.node->name != b.node->name) return a.node->name < b.node->name;
  for (std::size_t i = 0; i < a.pods.size(); ++i)
    if (a.pods[i]->key() != b.pods[i]->key()) return a.pods[i]->key() < b.pods[i]->key();
  return false;
}

// Calls `each` with every subset of `pool` of exactly k pods, in lexicographic index order.
void forEachSubset(const std::vector<const api::Pod*>& pool, std::size_t k,
                   const std::function<void(const std::vector<const api::Pod*>&)>& each) {
  if (k == 0 || k > pool.size()) return;
  std::vector<std::size_t> idx(k);
  std::iota(idx.begin(), idx.end(), 0);
  std::vector<const api::Pod*> set(k);
  while (true) {
    for (std::size_t i = 0; i < k; ++i) set[i] = pool[idx[i]];
    each(set);
    std::size_t i = k;
    while (i > 0 && idx[i - 1] == pool.size() - k + i - 1) --i;
    if (i == 0) return;
    ++idx[i - 1];
    for (std::size_t j = i; j < k; ++j) idx[j] = idx[j - 1] + 1;
  }
}

// The pods on a node that the search may move, and those in the way that it may not.
struct NodePods {
  std::vector<const api::Pod*> movable;
  std::vector<const api::Pod*> higher;  // of higher priority than the pending pod
  std::vector<const api::Pod*> kept;    // the profile's filters keep them
};

class Search {
 public:
  Search(const framework::Handle& h, const Args& args, const api::Pod& pending, RoomLedger& ledger, RunCache& cache,
         api::Timestamp now)
      : h_(h), args_(args), pending_(pending), ledger_(ledger), cache_(cache), now_(now), spread_(h, pending) {}

  RoomSearchResult run();

 private:
  NodePods podsOn(const api::Node& node);
  // Even the node's maxMovesPerPod largest pods, whatever their priority, cannot cover `s`: the
  // node is tallied as needing more moves without looking at its pods one by one (most nodes, for
  // a pod much larger than any node's free room).
  bool beyondAnyMoves(const api::Node& node, const Shortfall& s);
  void optionsOn(const api::Node& node, const Shortfall& s, std::vector<const api::Pod*> movable);
  bool tryOption(const Option& o);

  const framework::Handle& h_;
  const Args& args_;
  const api::Pod& pending_;
  RoomLedger& ledger_;
  RunCache& cache_;
  api::Timestamp now_;
  framework::SpreadFit spread_;
  std::vector<Option> options_;
  std::size_t fewest_ = 0;  // the fewest moves of any option so far (0: none yet)
  RoomSearchResult result_;
};

NodePods Search::podsOn(const api::Node& node) {
  NodePods out;
  for (RunCache::Resident& r : cache_.residentsOn(node)) {
    if (h_.isEvicted(*r.pod)) continue;  // moved for another pending pod earlier in the run
    if (priorityOf(*r.pod) > priorityOf(pending_))
      out.higher.push_back(r.pod);
    else if (!cache_.evictable(r))
      out.kept.push_back(r.pod);
    else
      out.movable.push_back(r.pod);
  }
  return out;
}

bool Search::beyondAnyMoves(const api::Node& node, const Shortfall& s) {
  const auto most = static_cast<std::size_t>(args_.maxMovesPerPod);
  for (const auto& [res, amount] : s.need) {
    if (cache_.mostFreedBy(node, res, most) >= amount) continue;
    ++result_.notHere[cache_.allFreedBy(node, res) < amount
                          ? std::string("not enough room even with every pod moved")
                          : "needs more than maxMovesPerPod (" + std::to_string(most) + ") moves"];
    return true;
  }
  return false;
}

// The smallest sets of the node's best kCandidatesPerNode movable pods that cover the shortfall.
void Search::optionsOn(const api::Node& node, const Shortfall& s, std::vector<const api::Pod*> movable) {
  std::stable_sort(movable.begin(), movable.end(),
                   [&](const api::Pod* a, const api::Pod* b) { return shareOf(s, *a) > shareOf(s, *b); });
  if (movable.size() > kCandidatesPerNode) movable.resize(kCandidatesPerNode);
  const std::size_t most = static_cast<std::size_t>(args_.maxMovesPerPod);
  const std::size_t limit = fewest_ == 0 ? most : std::min(most, fewest_);
  for (std::size_t k = 1; k <= limit; ++k) {
    bool found = false;
    forEachSubset(movable, k, [&](const std::vector<const api::Pod*>& set) {
      if (!covers(s, set)) return;
      found = true;
      Option o{&node, set, std::numeric_limits<std::int32_t>::min(), 0};
      std::sort(o.pods.begin(), o.pods.end(), [](const api::Pod* a, const api::Pod* b) { return a->key() < b->key(); });
      for (const api::Pod* p : o.pods) {
        o.highestPriority = std::max(o.highestPriority, priorityOf(*p));
        o.agesLost += ageOf(*p, now_);
      }
      options_.push_back(std::move(o));
    });
    if (found) {
      fewest_ = fewest_ == 0 ? k : std::min(fewest_, k);
      return;
    }
  }
  ++result_.notHere[limit == most ? "needs more than maxMovesPerPod (" + std::to_string(most) + ") moves"
                                  : std::string("needs more moves than another node")];
}

// The eviction chain admits the set, and every moved pod fits some other node once the pending pod
// and the pods moved before it are placed.
bool Search::tryOption(const Option& o) {
  if (framework::EvictResult r = h_.admitsAll(o.pods); !r.evicted && r.refusal != framework::Refusal::None) {
    ++result_.setsRefused[r.by + ": " + r.detail];
    return false;
  }
  RoomLedger trial = ledger_;
  for (const api::Pod* p : o.pods) trial.place(*p, *o.node, -1);
  trial.place(pending_, *o.node);
  std::vector<const api::Node*> landings;
  for (const api::Pod* p : o.pods) {
    const api::Node* to = nullptr;
    for (const api::Node* m : h_.nodes()) {
      if (m == o.node || !framework::nodeFit(h_, *p, *m, false).fits || !trial.roomFor(*p, *m)) continue;
      to = m;
      break;
    }
    if (!to) {
      ++result_.setsRefused["nowhere else to go for " + p->key()];
      return false;
    }
    trial.place(*p, *to);
    landings.push_back(to);
  }
  ledger_ = trial;
  result_.found = true;
  result_.plan = {o.node, o.pods, std::move(landings)};
  return true;
}

RoomSearchResult Search::run() {
  for (const api::Node* node : h_.nodes()) {
    // The cheap checks first: what the node alone rules out, then whether any moves could make
    // the room at all; the pods on the node (anti-affinity, spread, the movable ones) only after.
    if (const framework::FitResult st = framework::staticFit(pending_, *node, false); !st.fits) {
      ++result_.notHere[st.check];
      continue;
    }
    const bool tooBig = std::any_of(pending_.requests.begin(), pending_.requests.end(), [&](const auto& r) {
      return r.second > 0 && r.second > node->allocatable.get(r.first);
    });
    if (tooBig) {
      ++result_.notHere["larger than the node's allocatable"];
      continue;
    }
    const Shortfall s = shortfallOn(h_, pending_, ledger_.freeOn(*node));
    if (beyondAnyMoves(*node, s)) continue;
    const framework::FitResult fit = framework::nodeFit(h_, pending_, *node, false);
    if (!fit.fits && !isCapacityCheck(fit.check)) {
      ++result_.notHere[fit.check];
      continue;
    }
    if (spread_.constrained())
      if (framework::FitResult sf = spread_.check(*node); !sf.fits) {
        ++result_.notHere[sf.check];
        continue;
      }
    if (fit.fits && ledger_.roomFor(pending_, *node)) {
      result_.fitsAlready = node;
      return result_;
    }
    NodePods pods = podsOn(*node);
    if (!covers(s, pods.movable)) {
      std::vector<const api::Pod*> all = pods.movable;
      all.insert(all.end(), pods.higher.begin(), pods.higher.end());
      if (covers(s, all)) {
        ++result_.notHere["higher-priority pods in the way"];
        continue;
      }
      all.insert(all.end(), pods.kept.begin(), pods.kept.end());
      ++result_.notHere[covers(s, all) ? "pods the evictor's filters keep in the way"
                                       : "not enough room even with every pod moved"];
      continue;
    }
    optionsOn(*node, s, std::move(pods.movable));
  }
  std::sort(options_.begin(), options_.end(), before);
  for (std::size_t i = 0; i < options_.size() && i < kPlansTried; ++i)
    if (tryOption(options_[i])) break;
  return result_;
}

std::string tally(const std::map<std::string, std::size_t>& counts, const char* unit) {
  std::vector<std::pair<std::string, std::size_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [why, n] : sorted)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + unit + (n == 1 ? "" : "s") + ": " + why;
  return out;
}

}  // namespace

std::vector<RunCache::Resident>& RunCache::residentsOn(const api::Node& node) {
  auto [it, fresh] = byNode_.try_emplace(node.nameSym);
  if (fresh)
    for (const api::Pod* p : h_->podsOnNode(node))
      if (!p->isTerminating()) it->second.push_back({p});  // a terminating pod's room comes without a move
  return it->second;
}

const RunCache::Freed& RunCache::freedOf(const api::Node& node, api::Symbol resource) {
  auto [it, fresh] = freed_.try_emplace({node.nameSym, resource});
  Freed& f = it->second;
  if (fresh) {
    for (const Resident& r : residentsOn(node)) {
      f.largest.push_back(std::max<std::int64_t>(r.pod->requests.get(resource), 0));
      f.total += f.largest.back();
    }
    const std::size_t keep = std::min(f.largest.size(), static_cast<std::size_t>(kMaxMovesPerPod));
    std::partial_sort(f.largest.begin(), f.largest.begin() + static_cast<std::ptrdiff_t>(keep), f.largest.end(),
                      std::greater<>());
    f.largest.resize(keep);
  }
  return f;
}

std::int64_t RunCache::mostFreedBy(const api::Node& node, api::Symbol resource, std::size_t k) {
  const Freed& f = freedOf(node, resource);
  return std::accumulate(f.largest.begin(),
                         f.largest.begin() + static_cast<std::ptrdiff_t>(std::min(k, f.largest.size())),
                         std::int64_t{0});
}

std::int64_t RunCache::allFreedBy(const api::Node& node, api::Symbol resource) { return freedOf(node, resource).total; }

bool RunCache::evictable(Resident& r) {
  if (r.evictable < 0) r.evictable = h_->filter(*r.pod).ok && h_->preEvictionFilter(*r.pod).ok ? 1 : 0;
  return r.evictable == 1;
}

const api::ResourceList& RoomLedger::freeOn(const api::Node& node) {
  auto [it, fresh] = free_.try_emplace(node.nameSym);
  if (fresh) {
    it->second = node.allocatable;
    for (const auto& [res, amount] : framework::nodeRequestedResources(*h_, node)) it->second.add(res, -amount);
  }
  return it->second;
}

bool RoomLedger::roomFor(const api::Pod& pod, const api::Node& node) {
  const api::ResourceList& free = freeOn(node);
  if (free.get(api::kPods()) < 1000) return false;
  for (const auto& [res, amount] : pod.requests)
    if (amount > 0 && res != api::kPods() && amount > free.get(res)) return false;
  return true;
}

void RoomLedger::place(const api::Pod& pod, const api::Node& node, int sign) {
  freeOn(node);
  api::ResourceList& free = free_[node.nameSym];
  for (const auto& [res, amount] : pod.requests) free.add(res, -sign * amount);
  free.add(api::kPods(), -sign * 1000);
}

std::string RoomSearchResult::text(const api::Pod& pending, const Args& args) const {
  (void)pending;
  if (fitsAlready)
    return "not helped: it fits node " + fitsAlready->name +
           " already by kdesched's model (resources, affinity, taints, spread): what keeps it Pending is something "
           "moving pods cannot fix";
  std::string out =
      "not helped: no node has room for it even after moving up to " + std::to_string(args.maxMovesPerPod) + " pods";
  if (!notHere.empty()) out += " (" + tally(notHere, "node") + ")";
  if (!setsRefused.empty())
    out += "; the sets of moves that would make room were refused (" + tally(setsRefused, "set") + ")";
  return out;
}

RoomSearchResult searchRoom(const framework::Handle& h, const Args& args, const api::Pod& pending, RoomLedger& ledger,
                            RunCache& cache, api::Timestamp now) {
  return Search(h, args, pending, ledger, cache, now).run();
}

}  // namespace kdesched::plugins::makeroomforpendingpods
