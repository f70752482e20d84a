// What may stop a live cycle's evictions, apart from the policy: shutdown, the cache's health (a
// resource that lost its watch history is relisting, or its cache is stale), leadership, and pods
// an earlier run evicted.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "pkg/api/uid.h"

#include "pkg/base/clock.h"
#include "pkg/evictor/evictor.h"
#include "pkg/evictor/live_conditions.h"

namespace kdesched::evictor {

// The UIDs this process evicted lately. A run right after the one that evicted a pod (a periodic
// cycle after a triggered run, or a cycle that starts late) may still find the pod in the cache,
// its deletion not yet watched, and ask again: a 404 or 409, counted as a failed eviction. A UID
// is never evicted twice, so remembering it is always right; the TTL only bounds the memory.
// Thread-safe.
class RecentEvictions {
 public:
  explicit RecentEvictions(std::shared_ptr<Clock> clock, std::chrono::seconds ttl = std::chrono::minutes(10))
      : clock_(std::move(clock)), ttl_(ttl) {}
  void add(const api::Uid& uid);
  void forget(const api::Uid& uid);  // its eviction failed after all
  bool contains(const api::Uid& uid);

 private:
  std::shared_ptr<Clock> clock_;
  std::chrono::seconds ttl_;
  std::mutex mu_;
  std::unordered_map<api::Uid, Clock::TimePoint> at_;
};

// Checked right before each eviction request of one cycle:
//  - shutdown: after SIGTERM nothing new is evicted (the rest of the cycle runs without requests);
//  - the cache: a relist requested since the cycle's snapshot was taken, or a resource whose
//    cache went stale (access refused, or no refresh for too long);
//  - leadership (when `leader` is set): Lease-based election has no fencing;
//  - `recent` (when set; not in a dry run, where nothing is deleted): a pod an earlier run evicted.
class CycleGate : public EvictionGate {
 public:
  CycleGate(const Cancellation& stop, const CacheFreshness& cache, std::uint64_t relistsAtSnapshot,
            const Leadership* leader = nullptr, RecentEvictions* recent = nullptr)
      : stop_(stop), cache_(cache), relistsAtSnapshot_(relistsAtSnapshot), leader_(leader), recent_(recent) {}
  framework::EvictResult admit(const Decision& d) override;
  void evicted(const Decision& d) override;

 private:
  const Cancellation& stop_;
  const CacheFreshness& cache_;
  std::uint64_t relistsAtSnapshot_;
  const Leadership* leader_;
  RecentEvictions* recent_;
};

}  // namespace kdesched::evictor
