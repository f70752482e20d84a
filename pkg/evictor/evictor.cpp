#include "pkg/evictor/evictor.h"

namespace kdesched::evictor {

using framework::EvictResult;
using framework::FilterResult;
using framework::Refusal;

namespace {

// The refusal as the chain reports it: by the plugin that said no, unless it named someone itself.
FilterResult named(FilterResult r, const framework::Plugin& plugin) {
  if (r.by.empty()) r.by = std::string(plugin.name());
  return r;
}

}  // namespace

class EvictionChain::ProfileEvictor : public framework::Evictor {
 public:
  ProfileEvictor(EvictionChain& chain, const framework::Profile& profile) : chain_(chain), profile_(profile) {}

  FilterResult filter(const api::Pod& pod, const framework::Handle& h) override {
    for (const auto* f : profile_.filters) {
      FilterResult r = f->filter(pod, h);
      if (!r.ok) return named(std::move(r), *f);
    }
    return FilterResult::pass();
  }

  FilterResult preEvictionFilter(const api::Pod& pod, const framework::Handle& h) override {
    for (const auto* f : profile_.preEvictionFilters) {
      FilterResult r = f->preEvictionFilter(pod, h);
      if (!r.ok) return named(std::move(r), *f);
    }
    return FilterResult::pass();
  }

  EvictResult evict(const api::Pod& pod, const std::string& reason, const framework::Handle& h) override {
    return chain_.evict(profile_, pod, reason, h);
  }

  EvictResult admitsAll(const std::vector<const api::Pod*>& pods, const framework::Handle&) override {
    return chain_.admitsAll(pods);
  }

 private:
  EvictionChain& chain_;
  const framework::Profile& profile_;
};

GateChain::GateChain(std::vector<EvictionGate*> gates) {
  for (EvictionGate* g : gates)
    if (g) gates_.push_back(g);
}

EvictResult GateChain::admit(const Decision& d) {
  for (EvictionGate* g : gates_)
    if (EvictResult r = g->admit(d); r.refusal != Refusal::None) return r;
  return {};
}

void GateChain::evicted(const Decision& d) {
  for (EvictionGate* g : gates_) g->evicted(d);
}

void GateChain::runStarted() {
  for (EvictionGate* g : gates_) g->runStarted();
}

void GateChain::runFinished() {
  for (EvictionGate* g : gates_) g->runFinished();
}

void GateChain::cycleBegan(const cluster::Snapshot& snapshot) {
  for (EvictionGate* g : gates_) g->cycleBegan(snapshot);
}

EvictionChain::EvictionChain(EvictionLimits limits, Sink& sink, EvictionGate* gate, MoveAdvisor* moves)
    : limits_(limits), sink_(sink), gate_(gate), moves_(moves) {}

EvictionChain::~EvictionChain() = default;

void EvictionChain::beginCycle(const cluster::Snapshot& snapshot, framework::CycleState& state) {
  state_ = &state;
  pdb_ = std::make_unique<PdbBudget>(snapshot, state.compat().unreadyPodNeedsBudget);
  total_ = 0;
  refusedCount_ = 0;
  perNode_.clear();
  perNamespace_.clear();
  if (gate_) gate_->cycleBegan(snapshot);
}

framework::Evictor& EvictionChain::forProfile(const framework::Profile& profile) {
  auto& slot = evictors_[&profile];
  if (!slot) slot = std::make_unique<ProfileEvictor>(*this, profile);
  return *slot;
}

EvictResult EvictionChain::refuse(const Decision& d, EvictResult r) {
  ++refusedCount_;
  sink_.refused({d, r});
  return r;
}

EvictResult EvictionChain::evict(const framework::Profile& profile, const api::Pod& pod, const std::string& reason,
                                 const framework::Handle& h) {
  Decision d{&pod, pod.nodeName.str(), h.plugin(), profile.name, reason};
  if (!state_ || !pdb_) return refuse(d, EvictResult::refused(Refusal::Filter, "evictor", "no cycle in progress"));
  // With compat evictedEarlierNotCounted: upstream, a later plugin may evict the pod again, as
  // upstream's does (its informer still lists the pod).
  if (state_->isEvicted(pod)) return EvictResult::refused(Refusal::Filter, "evictor", "already evicted in this cycle");

  if (FilterResult f = forProfile(profile).filter(pod, h); !f.ok)
    return refuse(d, EvictResult::refused(Refusal::Filter, std::move(f.by), std::move(f.reason)));
  if (FilterResult f = forProfile(profile).preEvictionFilter(pod, h); !f.ok)
    return refuse(d, EvictResult::refused(Refusal::PreEvictionFilter, std::move(f.by), std::move(f.reason)));

  if (limits_.total && total_ + 1 > *limits_.total)
    return refuse(d, EvictResult::refused(
                         Refusal::TotalLimit, "maxNoOfPodsToEvictTotal",
                         "maximum number of evicted pods per cycle reached (" + std::to_string(*limits_.total) + ")"));
  if (limits_.perNode && !pod.nodeName.empty() && perNode_[pod.nodeName] + 1 > *limits_.perNode)
    return refuse(d, EvictResult::refused(Refusal::NodeLimit, "maxNoOfPodsToEvictPerNode",
                                          "maximum number of evicted pods per node reached (" +
                                              std::to_string(*limits_.perNode) + " on " + pod.nodeName.str() + ")"));
  if (limits_.perNamespace && perNamespace_[pod.ns] + 1 > *limits_.perNamespace)
    return refuse(d, EvictResult::refused(Refusal::NamespaceLimit, "maxNoOfPodsToEvictPerNamespace",
                                          "maximum number of evicted pods per namespace reached (" +
                                              std::to_string(*limits_.perNamespace) + " in " + pod.ns.str() + ")"));

  PdbCheck pdb = pdb_->check(pod);
  MoveOffer offer = moves_ ? moves_->consider(pod, h.snapshot(), !pdb.allowed) : MoveOffer{};
  d.move = std::move(offer.plan);
  d.noMove = offer.whyNot;
  auto refuseWhyNoMove = [&](EvictResult r) {
    r.noMove = offer.whyNot;
    return refuse(d, std::move(r));
  };
  if (!d.move && !pdb.allowed)
    return refuseWhyNoMove(EvictResult::refused(Refusal::Pdb, "PodDisruptionBudget " + pdb.pdb, pdb.detail));

  if (gate_) {
    EvictResult g = gate_->admit(d);
    if (!g.evicted && g.refusal != Refusal::None) return refuseWhyNoMove(std::move(g));
  }

  d.landing = framework::estimateLanding(h, pod);
  EvictResult res = sink_.evict(d);
  if (!res.evicted) {
    ++refusedCount_;
    res.noMove = offer.whyNot;
    return res;
  }
  res.noMove = offer.whyNot;
  if (d.move) {
    if (res.move.empty()) res.move = d.move->rollout;
    res.by = "Deployment " + d.move->ns + "/" + d.move->deployment;
  }
  state_->markEvicted(pod);
  // A move takes nothing from the budget: the old pod goes only once its replacement is available.
  if (!d.move) pdb_->consume(pod);
  ++total_;
  if (!pod.nodeName.empty()) ++perNode_[pod.nodeName];
  ++perNamespace_[pod.ns];
  if (gate_) gate_->evicted(d);
  return res;
}

// evict()'s limits and PDB budget for the pods in turn, on copies of the counters: nothing spent.
EvictResult EvictionChain::admitsAll(const std::vector<const api::Pod*>& pods) {
  if (!state_ || !pdb_) return EvictResult::refused(Refusal::Filter, "evictor", "no cycle in progress");
  PdbBudget pdb = *pdb_;
  std::size_t total = total_;
  std::unordered_map<api::Symbol, std::uint32_t> perNode, perNamespace;
  for (const api::Pod* pod : pods) {
    if (state_->isEvicted(*pod)) return EvictResult::refused(Refusal::Filter, "evictor", "already evicted");
    if (limits_.total && ++total > *limits_.total)
      return EvictResult::refused(
          Refusal::TotalLimit, "maxNoOfPodsToEvictTotal",
          "maximum number of evicted pods per cycle reached (" + std::to_string(*limits_.total) + ")");
    if (limits_.perNode && ++perNode[pod->nodeName] + perNode_[pod->nodeName] > *limits_.perNode)
      return EvictResult::refused(Refusal::NodeLimit, "maxNoOfPodsToEvictPerNode",
                                  "maximum number of evicted pods per node reached (" +
                                      std::to_string(*limits_.perNode) + " on " + pod->nodeName.str() + ")");
    if (limits_.perNamespace && ++perNamespace[pod->ns] + perNamespace_[pod->ns] > *limits_.perNamespace)
      return EvictResult::refused(Refusal::NamespaceLimit, "maxNoOfPodsToEvictPerNamespace",
                                  "maximum number of evicted pods per namespace reached (" +
                                      std::to_string(*limits_.perNamespace) + " in " + pod->ns.str() + ")");
    PdbCheck check = pdb.check(*pod);
    if (!check.allowed) return EvictResult::refused(Refusal::Pdb, "PodDisruptionBudget " + check.pdb, check.detail);
    pdb.consume(*pod);
  }
  return EvictResult::success();
}

}  // namespace kdesched::evictor
