// What the enabled plugins of a policy make worth watching: the kinds of event (Interest) and the
// deadlines (DeadlineFn) TriggeredRuns acts on.
#pragma once

#include <vector>

#include "pkg/framework/profile.h"
#include "pkg/trigger/affected.h"
#include "pkg/trigger/deadlines.h"

namespace kdesched::trigger {

Interest interestOf(const std::vector<framework::Profile>& profiles);

// Asks every profile's DeadlinePlugins; null when no profile has one. `profiles` must outlive it.
DeadlineFn deadlinesOf(const std::vector<framework::Profile>& profiles);

}  // namespace kdesched::trigger
