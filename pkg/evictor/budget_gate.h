// Schedulable disruption budgets (the policy's `kdesched: {budgets: ...}`, pkg/policy/budgets.h)
// enforced as the last gate before the sink, so plan, dry-run, the daemon's cycles and its
// triggered runs all go through them. While a budget is active it caps the evictions in its scope
// per run and, for a scheduled one, in total for its current window (counted in this process:
// a restart, or a CronJob's next run, starts from 0). A pod several active budgets select needs
// each one's allowance: effectively the smallest wins.
//
// A budget may also pace each workload (api::workloadOf: a Deployment across its ReplicaSets) in
// its scope: maxUnavailablePerOwner counts the owner's unavailable pods from the run's snapshot
// (not Ready, or terminating) plus the ones evicted earlier in the run, so it holds across a
// restart; minIntervalPerOwner spaces evictions of one owner's pods from the later of this
// process's last eviction and the owner's youngest pod's creation (a replacement's creation marks an
// earlier process's eviction), so it holds across a restart too.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/workload.h"
#include "pkg/base/clock.h"
#include "pkg/evictor/evictor.h"
#include "pkg/policy/budgets.h"

namespace kdesched::evictor {

class BudgetGate : public EvictionGate {
 public:
  // Told each budget's remaining allowance at each cycle's start and after each eviction;
  // nullopt when the budget is not active (its series goes).
  using Remaining = std::function<void(const std::string& budget, std::optional<double> remaining)>;

  BudgetGate(std::vector<policy::Budget> budgets, std::shared_ptr<Clock> clock, Remaining remaining = nullptr);

  void cycleBegan(const cluster::Snapshot& snapshot) override;
  framework::EvictResult admit(const Decision& d) override;
  void evicted(const Decision& d) override;

  // A budget active at the last cycle's start, as `plan --explain` shows it.
  struct Active {
    std::string name;
    std::string until;  // "" for an unscheduled budget (always active)
    std::string timeZone;
    std::uint32_t allowance = 0;
    std::uint32_t used = 0;     // in the window (scheduled) or the run (unscheduled)
    std::string allowanceText;  // "5", or "10% of 34 pods = 3"
  };
  std::vector<Active> active() const;

  // A pod a scheduled budget refused, and how long until that budget's window ends: the daemon
  // looks at it again then, as no event may come to re-trigger it.
  // How soon a pod maxUnavailablePerOwner refused is looked at again (with event triggers on).
  static constexpr double kUnavailableRecheckSeconds = 5;
  struct Retry {
    api::PodName pod;
    std::string plugin;
    double inSeconds = 0;
  };
  std::vector<Retry> takeRetries();

 private:
  struct OwnerKey {
    std::string ns;
    api::Workload workload;
    auto operator<=>(const OwnerKey&) const = default;
  };
  // An owner's pods in scope in the run's snapshot, and how many of them are unavailable (with
  // the ones evicted in the run since).
  struct OwnerCount {
    std::size_t pods = 0;
    std::uint32_t unavailable = 0;
  };
  struct State {
    policy::Budget budget;
    bool active = false;
    std::optional<policy::BudgetWindow> window;
    std::optional<std::chrono::sys_time<std::chrono::minutes>> evaluatedAt;  // the minute `window` is for
    std::optional<Clock::WallTime> windowStart;                              // the window the count belongs to
    std::uint32_t allowance = 0;
    std::size_t podsInScope = 0;
    std::uint32_t windowUsed = 0;
    std::uint32_t runUsed = 0;
    std::map<OwnerKey, OwnerCount> owners;              // with maxUnavailablePerOwner, rebuilt each run
    std::map<OwnerKey, api::Timestamp> youngest;        // with minIntervalPerOwner, rebuilt each run
    std::map<OwnerKey, Clock::TimePoint> lastEviction;  // with minIntervalPerOwner, kept across runs
  };
  static std::optional<OwnerKey> ownerOf(const api::Pod& pod);
  bool selects(const State& s, const Decision& d) const;
  // A per-owner rule of `s` refusing `d`: its refusal, with a retry when the rule ends at a known time.
  std::optional<framework::EvictResult> pacingRefusal(const State& s, const Decision& d);
  std::optional<framework::EvictResult> intervalRefusal(const State& s, const Decision& d, const OwnerKey& key);
  std::uint32_t used(const State& s) const { return s.budget.schedule ? s.windowUsed : s.runUsed; }
  std::string allowanceText(const State& s) const;
  framework::EvictResult refusal(const State& s) const;
  void report(const State& s) const;

  std::shared_ptr<Clock> clock_;
  Remaining remaining_;
  mutable std::mutex mu_;
  std::vector<State> states_;
  std::vector<Retry> retries_;
};

}  // namespace kdesched::evictor
