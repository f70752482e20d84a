// Reading the policy's top-level metrics sources (metricsCollector, metricsProviders), for
// policy.cpp.
#pragma once

#include <functional>

#include "pkg/policy/args.h"
#include "pkg/policy/policy.h"

namespace kdesched::policy::detail {

// Reads both fields from the top-level reader into `policy`, with upstream's validation messages
// (policyconfig.go) at kdesched's field paths. `lenient` ends a nested reader as upstream reads
// these levels: unknown keys become warnings.
Status readMetricsSources(ArgsReader& top, DeschedulerPolicy& policy,
                          const std::function<Status(ArgsReader&)>& lenient);

}  // namespace kdesched::policy::detail
