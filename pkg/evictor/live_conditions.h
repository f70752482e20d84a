// What a live cycle's evictions depend on besides the policy, as plain questions. The cache's health
// (kube::CacheHealth) and the leader elector (kube::LeaderElector) answer them, so the gate that asks
// (CycleGate) needs neither, and a cycle's walk from the evictor to the API never goes back up into
// the daemon's wiring. Header only: no library dependency for whoever implements it.
#pragma once

#include <cstdint>
#include <string>

namespace kdesched::evictor {

class CacheFreshness {
 public:
  virtual ~CacheFreshness() = default;
  // The cache's generation: how many relists were ever requested or done (a LIST or watch-list
  // that replaced a resource's store). A change between a snapshot and an eviction means the
  // snapshot was taken from a cache that was already (or has since been found) out of sync, or
  // that has since been replaced (after a 410, a refused watch, an undecodable line).
  virtual std::uint64_t relistRequests() const = 0;
  // The kinds being relisted, comma-separated; "" when every cache is in sync.
  virtual std::string relisting() const = 0;
  // Why some resource's cache cannot be trusted (access to it refused, or it has not refreshed
  // for too long), as "pods (watch: 403 Forbidden: ...)"; "" when none.
  virtual std::string stale() const = 0;
};

class Leadership {
 public:
  virtual ~Leadership() = default;
  virtual bool isLeader() const = 0;
};

}  // namespace kdesched::evictor
