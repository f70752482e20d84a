#include "pkg/daemon/source_health.h"

#include "pkg/base/log.h"

namespace kdesched::daemon {

SourceHealth::SourceHealth(std::string source, std::string origin, metrics::Metrics* metrics)
    : source_(std::move(source)), origin_(std::move(origin)), metrics_(metrics) {}

void SourceHealth::report(const std::string& part, const std::optional<std::string>& error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failing_.find(part);
  if (error) {
    if (it == failing_.end())
      log::warn("usage source failing; balancing by its usage skips until it answers",
                {{"source", source_}, {"origin", origin_}, {"what", part}, {"error", *error}});
    failing_[part] = *error;
  } else if (it != failing_.end()) {
    log::info("usage source answers again", {{"source", source_}, {"origin", origin_}, {"what", part}});
    failing_.erase(it);
  }
  // Under the lock: the collector's thread and the cycle's report, and the last word must win.
  if (metrics_) metrics_->usageSourceUp(source_, failing_.empty());
}

bool SourceHealth::up() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failing_.empty();
}

}  // namespace kdesched::daemon
