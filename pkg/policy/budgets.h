// Schedulable disruption budgets: the `budgets:` list of the policy's `kdesched:` block.
//   budgets:
//   - name: business-hours
//     schedule: "0 8 * * 1-5"        # cron, 5 fields; absent: always active
//     timeZone: Europe/Berlin        # IANA name, default UTC
//     duration: 10h                  # each tick opens a window this long
//     maxEvictions: 0                # a count, or "10%" of the pods in scope (rounded down); 0: a freeze
//     maxUnavailablePerOwner: "20%"  # per workload: a count, or a percentage of its pods (down, at least 1)
//     minIntervalPerOwner: 1m        # per workload: after an eviction or a new pod of its
//     scope: {plugins: [...], namespaces: {include|exclude: [...]}, labelSelector: {...}}
// The evictor enforces them (pkg/evictor/budget_gate.h); this file decodes them and says when a
// budget's window is open. Time zones come from the system's tz database (Debian's tzdata) through
// Howard Hinnant's date library: libstdc++ 12 has no std::chrono time-zone database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/labels.h"
#include "pkg/base/clock.h"
#include "pkg/policy/args.h"
#include "pkg/policy/cron.h"

namespace kdesched::policy {

struct BudgetScope {
  std::vector<std::string> plugins;  // empty: every plugin
  std::optional<Namespaces> namespaces;
  std::optional<api::LabelSelector> labelSelector;

  // Whether a pod with these namespace and labels is in scope, plugins aside.
  bool selectsPod(std::string_view ns, const api::Labels& labels) const;
  bool selectsPlugin(std::string_view plugin) const;
};

struct Budget {
  std::string name;
  std::optional<CronSchedule> schedule;  // none: always active
  std::string timeZone = "UTC";
  double durationSeconds = 0;  // with a schedule, > 0
  bool capsEvictions = true;   // maxEvictions is set (a budget may hold only the per-owner fields)
  std::uint32_t maxEvictions = 0;
  bool percent = false;  // maxEvictions is a percentage of the pods in scope in the snapshot
  // Per owner (api::workloadOf): at most this many of its pods unavailable (a count, or a
  // percentage of its pods), and at least this long between two of its evictions.
  std::optional<std::uint32_t> maxUnavailablePerOwner;
  bool unavailablePercent = false;
  std::optional<double> minIntervalPerOwnerSeconds;
  BudgetScope scope;

  // The allowance for `podsInScope` pods: the count, or the percentage of them rounded down.
  std::uint32_t allowance(std::size_t podsInScope) const;
  // The unavailable pods allowed for an owner with `ownerPods` pods: the count, or the percentage
  // of them rounded down (as the Deployment controller rounds maxUnavailable) but at least 1
  // unless the percentage is 0. Only with maxUnavailablePerOwner set.
  std::uint32_t unavailableAllowance(std::size_t ownerPods) const;
  bool paces() const { return maxUnavailablePerOwner.has_value() || minIntervalPerOwnerSeconds.has_value(); }
};

// A window a schedule tick opened: [start, end).
struct BudgetWindow {
  Clock::WallTime start;
  Clock::WallTime end;
};

// The window of `b` open at `now`, opened by the latest tick within one duration before it;
// nullopt when none is. A budget without schedule has no window (always active: check
// `b.schedule` first). A local time the zone skips (spring forward) ticks when the skip happens,
// so a window is never lost to a DST change; one the zone repeats (fall back) ticks once, the
// first time.
std::optional<BudgetWindow> activeWindow(const Budget& b, Clock::WallTime now);

// `t` in the budget's zone, RFC 3339 with the offset: 2026-12-07T18:00:00+01:00.
std::string formatInZone(const Budget& b, Clock::WallTime t);

// Reads `budgets` from the `kdesched:` block (absent: none). Errors name the field path:
// `kdesched.budgets[0].schedule: minute field "61" out of range 0-59`.
Status readBudgets(ArgsReader& kdeschedBlock, std::vector<Budget>& out);

}  // namespace kdesched::policy
