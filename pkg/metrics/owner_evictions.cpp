#include "pkg/metrics/owner_evictions.h"

namespace kdesched::metrics {

void OwnerEvictions::evicted(const std::string& ns, const Workload& owner, const std::string& reason, TimePoint now) {
  Key key{ns, owner.kind, owner.name, reason};
  std::lock_guard<std::mutex> lock(mu_);
  if (!owners_.contains(key) && owners_.size() >= config_.maxSeries) {
    forgetIdleLocked(now);
    if (owners_.size() >= config_.maxSeries) {
      seriesFor(overflow_, Key{"", "", std::string(kOverflowOwner), reason}, now).counter->Increment();
      return;
    }
  }
  seriesFor(owners_, key, now).counter->Increment();
}

OwnerEvictions::Series& OwnerEvictions::seriesFor(std::map<Key, Series>& table, const Key& key, TimePoint now) {
  auto it = table.find(key);
  if (it == table.end()) {
    prometheus::Counter& c = family_.Add(
        {{"namespace", key.ns}, {"owner_kind", key.kind}, {"owner_name", key.name}, {"reason", key.reason}});
    it = table.emplace(key, Series{&c, now}).first;
  }
  it->second.last = now;
  return it->second;
}

void OwnerEvictions::forgetIdle(TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  forgetIdleLocked(now);
}

void OwnerEvictions::forgetIdleLocked(TimePoint now) {
  for (auto* table : {&owners_, &overflow_}) {
    std::erase_if(*table, [&](const auto& entry) {
      if (now - entry.second.last < config_.idle) return false;
      family_.Remove(entry.second.counter);
      return true;
    });
  }
}

std::size_t OwnerEvictions::ownerSeries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return owners_.size();
}

}  // namespace kdesched::metrics
