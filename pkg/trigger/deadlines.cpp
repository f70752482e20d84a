#include "pkg/trigger/deadlines.h"

namespace kdesched::trigger {

bool DeadlineQueue::set(DeadlineEntry entry) {
  erase(entry.pod);
  if (capacity_ == 0) return false;
  if (byPod_.size() >= capacity_) {
    auto latest = std::prev(byTime_.end());
    if (latest->first <= entry.due) return false;
    byPod_.erase(latest->second);
    byTime_.erase(latest);
  }
  byTime_.emplace(entry.due, entry.pod);
  byPod_[std::move(entry.pod)] = {entry.due, std::move(entry.plugins)};
  return true;
}

void DeadlineQueue::erase(const api::PodName& pod) {
  auto it = byPod_.find(pod);
  if (it == byPod_.end()) return;
  byTime_.erase({it->second.due, pod});
  byPod_.erase(it);
}

void DeadlineQueue::clear() {
  byPod_.clear();
  byTime_.clear();
}

std::optional<Clock::TimePoint> DeadlineQueue::next() const {
  if (byTime_.empty()) return std::nullopt;
  return byTime_.begin()->first;
}

std::vector<DeadlineEntry> DeadlineQueue::take(Clock::TimePoint now) {
  std::vector<DeadlineEntry> due;
  while (!byTime_.empty() && byTime_.begin()->first <= now) {
    auto it = byPod_.find(byTime_.begin()->second);
    due.push_back({it->first, std::move(it->second.plugins), it->second.due});
    byPod_.erase(it);
    byTime_.erase(byTime_.begin());
  }
  return due;
}

}  // namespace kdesched::trigger
