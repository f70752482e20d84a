#include "pkg/daemon/stale_wait.h"

#include <cmath>
#include <set>
#include <string>

#include "pkg/base/log.h"

namespace kdesched::daemon {

namespace {

void warnNew(const std::vector<kube::StaleResource>& stale, std::set<std::string>& warned) {
  for (const kube::StaleResource& r : stale)
    if (warned.insert(r.resource).second)
      log::warn("cache stale, skipping the cycle",
                {{"resource", r.resource}, {"verb", r.verb}, {"reason", r.reason}, {"stale_seconds", r.seconds}});
}

}  // namespace

bool awaitFresh(Clock& clock, Cancellation& stop, const StaleNow& staleNow, Clock::Duration poll) {
  const Clock::TimePoint since = clock.now();
  std::set<std::string> warned;
  for (std::vector<kube::StaleResource> stale = staleNow(); !stale.empty(); stale = staleNow()) {
    warnNew(stale, warned);
    if (!clock.sleepFor(poll, &stop)) return false;
  }
  log::info("cache resynced, running the cycle", {{"waited_seconds", std::round(clock.secondsSince(since) * 10) / 10}});
  return true;
}

}  // namespace kdesched::daemon
