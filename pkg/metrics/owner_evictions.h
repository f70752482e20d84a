// kdesched_owner_evictions_total{namespace, owner_kind, owner_name, reason}: which workloads kdesched
// evicts most. A label per workload is what upstream declined for cardinality, so the series are
// bounded two ways: a series whose owner has had no eviction for `idle` is removed, and at most
// `maxSeries` owner series exist at once; an eviction that would need one more goes to its
// plugin's overflow series (owner_name="_overflow", which no Kubernetes name can be).
//
// Time is the caller's (the injected clock's monotonic time); the removal happens on an eviction
// that finds the table full and on forgetIdle(), which the daemon calls after each periodic cycle.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "pkg/api/types.h"
#include "pkg/api/workload.h"

namespace kdesched::metrics {

struct OwnerEvictionsConfig {
  // A series without an eviction this long is removed (--owner-evictions-idle). Alerts and panels
  // that read it over a window up to this long see every eviction.
  std::chrono::nanoseconds idle = std::chrono::hours(1);
  // Owner series at most (--owner-evictions-max-series); 0: every eviction counts under overflow.
  std::size_t maxSeries = 500;
};

// The owner_name of the overflow series: Kubernetes names never start with '_'.
inline constexpr std::string_view kOverflowOwner = "_overflow";

// What a pod's evictions count under: its workload (pkg/api/workload.h), a Deployment's
// ReplicaSets read as the Deployment so a rollout keeps its series.
using api::Workload;
using api::workloadOf;

class OwnerEvictions {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  OwnerEvictions(prometheus::Family<prometheus::Counter>& family, OwnerEvictionsConfig config)
      : family_(family), config_(config) {}

  // One successful eviction by plugin `reason` of a pod of `owner` in namespace `ns`.
  void evicted(const std::string& ns, const Workload& owner, const std::string& reason, TimePoint now);
  // Removes the series (overflow ones included) without an eviction for the idle window.
  void forgetIdle(TimePoint now);
  // Owner series now, overflow series not counted.
  std::size_t ownerSeries() const;

 private:
  struct Key {
    std::string ns, kind, name, reason;
    auto operator<=>(const Key&) const = default;
  };
  struct Series {
    prometheus::Counter* counter;
    TimePoint last;
  };
  // Caller holds mu_.
  void forgetIdleLocked(TimePoint now);
  Series& seriesFor(std::map<Key, Series>& table, const Key& key, TimePoint now);

  prometheus::Family<prometheus::Counter>& family_;
  const OwnerEvictionsConfig config_;
  mutable std::mutex mu_;
  std::map<Key, Series> owners_;
  std::map<Key, Series> overflow_;  // one per plugin at most
};

}  // namespace kdesched::metrics
