#include "pkg/evictor/evictor.h"

namespace kdesched::evictor {

using framework::EvictResult;
using framework::FilterResult;
using framework::Refusal;

class EvictionChain::ProfileEvictor : public framework::Evictor {
 public:
  ProfileEvictor(EvictionChain& chain, const framework::Profile& profile) : chain_(chain), profile_(profile) {}

  FilterResult filter(const api::Pod& pod, const framework::Handle& h) override {
    for (const auto* f : profile_.filters) {
      FilterResult r = f->filter(pod, h);
      if (!r.ok) return FilterResult::fail(std::string(f->name()) + ": " + r.reason);
    }
    return FilterResult::pass();
  }

  FilterResult preEvictionFilter(const api::Pod& pod, const framework::Handle& h) override {
    for (const auto* f : profile_.preEvictionFilters) {
      FilterResult r = f->preEvictionFilter(pod, h);
      if (!r.ok) return FilterResult::fail(std::string(f->name()) + ": " + r.reason);
    }
    return FilterResult::pass();
  }

  EvictResult evict(const api::Pod& pod, const std::string& reason, const framework::Handle& h) override {
    return chain_.evict(profile_, pod, reason, h);
  }

 private:
  EvictionChain& chain_;
  const framework::Profile& profile_;
};

EvictionChain::EvictionChain(EvictionLimits limits, Sink& sink, EvictionGate* gate)
    : limits_(limits), sink_(sink), gate_(gate) {}

EvictionChain::~EvictionChain() = default;

void EvictionChain::beginCycle(const cluster::Snapshot& snapshot, framework::CycleState& state) {
  state_ = &state;
  pdb_ = std::make_unique<PdbBudget>(snapshot);
  total_ = 0;
  refusedCount_ = 0;
  perNode_.clear();
  perNamespace_.clear();
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
  if (state_->isEvicted(pod)) return EvictResult::refused(Refusal::Filter, "evictor", "already evicted in this cycle");

  // The filter chain names the plugin that refused: "DefaultEvictor: <why>".
  auto split = [](const std::string& s) {
    auto pos = s.find(": ");
    return pos == std::string::npos ? std::pair<std::string, std::string>{"filter", s}
                                    : std::pair<std::string, std::string>{s.substr(0, pos), s.substr(pos + 2)};
  };
  if (FilterResult f = forProfile(profile).filter(pod, h); !f.ok) {
    auto [by, why] = split(f.reason);
    return refuse(d, EvictResult::refused(Refusal::Filter, by, why));
  }
  if (FilterResult f = forProfile(profile).preEvictionFilter(pod, h); !f.ok) {
    auto [by, why] = split(f.reason);
    return refuse(d, EvictResult::refused(Refusal::PreEvictionFilter, by, why));
  }

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

  if (PdbCheck c = pdb_->check(pod); !c.allowed)
    return refuse(d, EvictResult::refused(Refusal::Pdb, "PodDisruptionBudget " + c.pdb, c.detail));

  if (gate_) {
    EvictResult g = gate_->admit(d);
    if (!g.evicted && g.refusal != Refusal::None) return refuse(d, g);
  }

  EvictResult res = sink_.evict(d);
  if (!res.evicted) {
    ++refusedCount_;
    return res;
  }
  state_->markEvicted(pod);
  pdb_->consume(pod);
  ++total_;
  if (!pod.nodeName.empty()) ++perNode_[pod.nodeName];
  ++perNamespace_[pod.ns];
  if (gate_) gate_->evicted(d);
  return res;
}

}  // namespace kdesched::evictor
