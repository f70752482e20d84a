#include "pkg/daemon/cycle_gate.h"

namespace kdesched::daemon {

void CacheHealth::relistRequested(api::Kind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.insert(kind);
  ++requests_;
}

void CacheHealth::listed(api::Kind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(kind);
}

std::string CacheHealth::relisting() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (api::Kind k : pending_) {
    if (!out.empty()) out += ",";
    out += std::string(api::toString(k));
  }
  return out;
}

std::uint64_t CacheHealth::relistRequests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

framework::EvictResult CycleGate::admit(const evictor::Decision&) {
  using framework::EvictResult;
  using framework::Refusal;
  if (stop_.cancelled()) return EvictResult::refused(Refusal::ApiError, "shutdown", "kdesched is shutting down");
  if (health_.relistRequests() != relistsAtSnapshot_)
    return EvictResult::refused(Refusal::ApiError, "cache",
                                "a relist was requested since this cycle's snapshot (watch history lost: " +
                                    (health_.relisting().empty() ? std::string("relisted since") : health_.relisting()) +
                                    "); the snapshot may be stale");
  if (isLeader_ && !isLeader_())
    return EvictResult::refused(Refusal::ApiError, "leader election", "this replica is not the leader any more");
  return {};
}

}  // namespace kdesched::daemon
