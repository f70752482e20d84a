// One run of the engine in the live modes, the same for a periodic cycle and an event-triggered
// scoped run: snapshot → measured usage (when a plugin of the run balances by it) → gates
// (shutdown, stale cache, leadership, disruption budgets, anti-flapping) → eviction chain → cycle → flush of the
// pipelined evictions → requeue of cooldown and budget refusals → settled counts. Periodic cycles and triggered runs
// never overlap.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pkg/base/clock.h"
#include "pkg/cluster/store.h"
#include "pkg/daemon/usage_sources.h"
#include "pkg/engine/engine.h"
#include "pkg/evictor/budget_gate.h"
#include "pkg/evictor/cycle_gate.h"
#include "pkg/evictor/pipelined_sink.h"
#include "pkg/metrics/metrics.h"
#include "pkg/trigger/triggered_runs.h"

namespace kdesched::daemon {

struct RunReport {
  bool ran = false;
  std::string skipReason;        // why it did not run: shutdown, not the leader, a cache relisting or stale
  framework::CycleResult cycle;  // its seconds include waiting for the evictions' answers
  std::size_t evicted = 0;       // settled: submissions the server refused later count as refused
  std::size_t refused = 0;
  std::size_t pods = 0;  // in the snapshot
};

// What a runner works with. References and pointers must outlive it.
struct CycleRunnerParts {
  cluster::Store& store;
  const engine::Engine& engine;
  const evictor::CacheFreshness& cache;
  Cancellation& stop;      // also cuts the usage requests of a run short
  evictor::Sink& primary;  // the API sink, or the dry-run sink
  std::shared_ptr<Clock> clock;
  std::vector<evictor::Sink*> observers = {};   // see the outcomes as the server answered (metrics)
  std::size_t concurrency = 1;                  // eviction requests in flight
  const evictor::Leadership* leader = nullptr;  // null: no leader election
  evictor::RecentEvictions* recent = nullptr;   // null in a dry run: nothing is deleted
  evictor::EvictionGate* antiFlapping = nullptr;
  evictor::BudgetGate* budgets = nullptr;  // null: the policy has no disruption budgets
  framework::CycleObserver* pluginObserver = nullptr;
  metrics::Metrics* metrics = nullptr;
  double ownerCooldownSeconds = 0;  // cooldown refusals are looked at again this much later
  // Measures usage for the runs that include a plugin balancing by it; null: none does.
  UsageSources* usage = nullptr;
  evictor::MoveAdvisor* moves = nullptr;  // null: no moves
};

class CycleRunner : public trigger::ScopedRunner {
 public:
  explicit CycleRunner(CycleRunnerParts parts);
  ~CycleRunner() override;

  // Where the candidates the owner cooldown refused go (null: nowhere), to be looked at again when
  // the cooldown ends: the violation stays, but no new event may come to re-trigger it. The same
  // for the candidates a scheduled disruption budget refused, when its window ends.
  void setCooldownRetries(trigger::TriggeredRuns* retries);

  // The store's snapshot, with the cache's generation read right before it (trigger::RunSnapshot).
  trigger::RunSnapshot snapshot() override;
  // One run over `scope` (default: the whole cycle), on `taken` (empty: a snapshot taken now).
  // Nothing is evicted once the cache's generation moved past the snapshot's.
  RunReport runOnce(const framework::CycleScope& scope = {}, trigger::RunSnapshot taken = {});
  // A periodic cycle: runOnce, the "cycle finished" line and the loop metrics.
  RunReport runPeriodic();
  // A triggered run (the runner of TriggeredRuns): runOnce, the "triggered run finished" line and the
  // trigger metrics.
  void runScoped(const framework::CycleScope& scope, Clock::TimePoint firstEvent,
                 trigger::RunSnapshot taken = {}) override;

  // Evictions the API server refused for reasons that will not go away by themselves (forbidden,
  // server errors, unreachable): a one-shot run that had any exits non-zero.
  std::size_t hardFailures() const;

 private:
  class HardFailures;
  class CooldownRefusals;
  std::string whyNot() const;
  std::optional<usage::ClusterUsage> measureUsage(const cluster::Snapshot& snapshot,
                                                  const framework::CycleScope& scope);

  CycleRunnerParts parts_;
  std::unique_ptr<HardFailures> hardFailures_;
  std::unique_ptr<CooldownRefusals> cooldownRefusals_;
  std::unique_ptr<evictor::PipelinedSink> sink_;
  trigger::TriggeredRuns* cooldownRetries_ = nullptr;
  std::mutex mu_;
};

}  // namespace kdesched::daemon
