#include "pkg/kube/cache_health.h"

namespace kdesched::kube {

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

}  // namespace kdesched::kube
