// The daemon's wait on a stale cache: the cycle that is due waits until every resource has resynced,
// and the log says why it waits, resource by resource, as each becomes stale during the wait (not
// only those stale when the wait began: after an API server restart, the resources are refused one
// after another as their watches re-open).
#pragma once

#include <functional>
#include <vector>

#include "pkg/base/clock.h"
#include "pkg/kube/cache_health.h"

namespace kdesched::daemon {

using StaleNow = std::function<std::vector<kube::StaleResource>()>;

// Waits (polling every `poll`) until staleNow() is empty. Logs one "cache stale, skipping the cycle"
// warning for each resource the first time it is seen stale, and "cache resynced" at the end.
// False: stopped first.
bool awaitFresh(Clock& clock, Cancellation& stop, const StaleNow& staleNow, Clock::Duration poll);

}  // namespace kdesched::daemon
