// What may stop a live cycle's evictions, apart from the policy: the cache's health (a resource
// that lost its watch history is relisting), shutdown, and leadership.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "pkg/api/decode.h"
#include "pkg/base/clock.h"
#include "pkg/evictor/evictor.h"
#include "pkg/kube/reflector.h"

namespace kdesched::daemon {

// Fed by the reflectors (it is their observer): a relist request (410 Gone, or a watch line that
// could not be decoded) means events were lost, so that resource's cache is out of sync until the
// relist has replaced it. Thread-safe.
class CacheHealth : public kube::ReflectorObserver {
 public:
  void relistRequested(api::Kind kind);
  void listed(api::Kind kind);
  void onList(api::Kind kind, std::size_t, double) override { listed(kind); }
  void onRelist(api::Kind kind, const std::string&) override { relistRequested(kind); }
  // The kinds being relisted, comma-separated; "" when every cache is in sync.
  std::string relisting() const;
  // How many relists were ever requested: a change between a snapshot and an eviction means the
  // snapshot was taken from a cache that was already (or has since been found) out of sync.
  std::uint64_t relistRequests() const;

 private:
  mutable std::mutex mu_;
  std::set<api::Kind> pending_;
  std::uint64_t requests_ = 0;
};

// The UIDs this process evicted lately. A run right after the one that evicted a pod (a periodic
// cycle after a triggered run, or a cycle that starts late) may still find the pod in the cache,
// its deletion not yet watched, and ask again: a 404 or 409, counted as a failed eviction. A UID
// is never evicted twice, so remembering it is always right; the TTL only bounds the memory.
// Thread-safe.
class RecentEvictions {
 public:
  explicit RecentEvictions(std::shared_ptr<Clock> clock, std::chrono::seconds ttl = std::chrono::minutes(10))
      : clock_(std::move(clock)), ttl_(ttl) {}
  void add(const std::string& uid);
  void forget(const std::string& uid);  // its eviction failed after all
  bool contains(const std::string& uid);

 private:
  std::shared_ptr<Clock> clock_;
  std::chrono::seconds ttl_;
  std::mutex mu_;
  std::map<std::string, Clock::TimePoint> at_;
};

// Checked right before each eviction request of one cycle:
//  - shutdown: after SIGTERM nothing new is evicted (the rest of the cycle runs without requests);
//  - the cache: a relist requested since the cycle's snapshot was taken;
//  - leadership (when `isLeader` is set): Lease-based election has no fencing;
//  - `recent` (when set; not in a dry run, where nothing is deleted): a pod an earlier run evicted.
class CycleGate : public evictor::EvictionGate {
 public:
  CycleGate(const Cancellation& stop, const CacheHealth& health, std::uint64_t relistsAtSnapshot,
            std::function<bool()> isLeader = {}, RecentEvictions* recent = nullptr)
      : stop_(stop),
        health_(health),
        relistsAtSnapshot_(relistsAtSnapshot),
        isLeader_(std::move(isLeader)),
        recent_(recent) {}
  framework::EvictResult admit(const evictor::Decision& d) override;
  void evicted(const evictor::Decision& d) override;

 private:
  const Cancellation& stop_;
  const CacheHealth& health_;
  std::uint64_t relistsAtSnapshot_;
  std::function<bool()> isLeader_;
  RecentEvictions* recent_;
};

}  // namespace kdesched::daemon
