#include "pkg/evictor/cycle_gate.h"

namespace kdesched::evictor {

void RecentEvictions::add(const api::Uid& uid) {
  if (uid.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::TimePoint now = clock_->now();
  // Expired entries go here, once per eviction, rather than in contains(), which runs for every
  // candidate the evictor admits.
  for (auto it = at_.begin(); it != at_.end();) it = now - it->second > ttl_ ? at_.erase(it) : std::next(it);
  at_[uid] = now;
}

void RecentEvictions::forget(const api::Uid& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  at_.erase(uid);
}

bool RecentEvictions::contains(const api::Uid& uid) {
  if (uid.empty()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = at_.find(uid);
  return it != at_.end() && clock_->now() - it->second <= ttl_;
}

framework::EvictResult CycleGate::admit(const Decision& d) {
  using framework::EvictResult;
  using framework::Refusal;
  if (stop_.cancelled()) return EvictResult::refused(Refusal::Shutdown, "shutdown", "kdesched is shutting down");
  if (recent_ && d.pod && recent_->contains(d.pod->uid))
    return EvictResult::refused(Refusal::Filter, "evictor",
                                "evicted by an earlier run; its deletion is not in the cache yet");
  if (cache_.relistRequests() != relistsAtSnapshot_)
    return EvictResult::refused(Refusal::StaleCache, "cache",
                                "a relist was requested since this cycle's snapshot (watch history lost: " +
                                    (cache_.relisting().empty() ? std::string("relisted since") : cache_.relisting()) +
                                    "); the snapshot may be stale");
  // The runner does not start a run on a stale cache; this catches one that went stale during it.
  if (std::string stale = cache_.stale(); !stale.empty())
    return EvictResult::refused(Refusal::StaleCache, "cache",
                                "the cache cannot be trusted: " + stale + "; no eviction until it has resynced");
  if (leader_ && !leader_->isLeader())
    return EvictResult::refused(Refusal::NotLeader, "leader election", "this replica is not the leader any more");
  return {};
}

void CycleGate::evicted(const Decision& d) {
  if (recent_ && d.pod) recent_->add(d.pod->uid);
}

}  // namespace kdesched::evictor
