// The eviction chain after plugins: the profile's filters, its preEvictionFilters, the per-cycle
// limits (total, node, namespace — upstream's order), the PDB budget, then the sink. Limits and PDB
// budget are shared by all profiles of a cycle; counters reset at each cycle's start.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/evictor/move_advisor.h"
#include "pkg/evictor/pdb_budget.h"
#include "pkg/evictor/sink.h"
#include "pkg/framework/cycle.h"

namespace kdesched::evictor {

struct EvictionLimits {
  std::optional<std::uint32_t> perNode;
  std::optional<std::uint32_t> perNamespace;
  std::optional<std::uint32_t> total;
};

// A last say before the sink, for cross-cycle policies (anti-flapping, rate limits).
class EvictionGate {
 public:
  virtual ~EvictionGate() = default;
  // Returns a refusal (refusal != None) to stop the eviction.
  virtual framework::EvictResult admit(const Decision& d) = 0;
  virtual void evicted(const Decision& d) = 0;
  // One run (a cycle, or a triggered run) planned against one snapshot starts and ends, its late
  // evictions answered: a gate may treat that run's set as one decision.
  virtual void runStarted() {}
  virtual void runFinished() {}
  // The chain starts a cycle on `snapshot` (every mode, plan included): a gate that sizes itself
  // by the cluster (a budget's percentage of pods) or by the time of the run reads them here.
  virtual void cycleBegan(const cluster::Snapshot& snapshot) { (void)snapshot; }
};

// Several gates as one, e.g. a live cycle's own gate, then the cross-cycle ones (anti-flapping):
// each must admit, in order, and the first refusal wins; every gate hears of each eviction.
class GateChain : public EvictionGate {
 public:
  explicit GateChain(std::vector<EvictionGate*> gates);  // null entries are left out
  framework::EvictResult admit(const Decision& d) override;
  void evicted(const Decision& d) override;
  void runStarted() override;
  void runFinished() override;
  void cycleBegan(const cluster::Snapshot& snapshot) override;

 private:
  std::vector<EvictionGate*> gates_;
};

class EvictionChain : public framework::EvictorProvider {
 public:
  // `moves` (may be null: no moves) may replace an eviction by a move (move_advisor.h).
  EvictionChain(EvictionLimits limits, Sink& sink, EvictionGate* gate = nullptr, MoveAdvisor* moves = nullptr);
  ~EvictionChain() override;

  void beginCycle(const cluster::Snapshot& snapshot, framework::CycleState& state) override;
  framework::Evictor& forProfile(const framework::Profile& profile) override;

  std::size_t evictedThisCycle() const { return total_; }
  std::size_t refusedThisCycle() const { return refusedCount_; }

 private:
  class ProfileEvictor;
  framework::EvictResult evict(const framework::Profile& profile, const api::Pod& pod, const std::string& reason,
                               const framework::Handle& h);
  framework::EvictResult refuse(const Decision& d, framework::EvictResult r);
  framework::EvictResult admitsAll(const std::vector<const api::Pod*>& pods);

  EvictionLimits limits_;
  Sink& sink_;
  EvictionGate* gate_;
  MoveAdvisor* moves_;
  framework::CycleState* state_ = nullptr;
  std::unique_ptr<PdbBudget> pdb_;
  std::size_t total_ = 0;
  std::size_t refusedCount_ = 0;
  std::unordered_map<api::Symbol, std::uint32_t> perNode_;
  std::unordered_map<api::Symbol, std::uint32_t> perNamespace_;
  std::map<const framework::Profile*, std::unique_ptr<ProfileEvictor>> evictors_;
};

}  // namespace kdesched::evictor
