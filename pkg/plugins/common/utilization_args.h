// Args both node-utilization plugins read the same way (upstream: nodeutilization/validation.go).
#pragma once

#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/policy/args.h"

namespace kdesched::plugins::nodeusage {

// Upstream's validateThresholds: non-empty, each percentage in [0, 100]. `prefix` starts each
// message, as upstream's callers wrap it ("thresholds config is not valid: " for
// LowNodeUtilization, nothing for HighNodeUtilization). Errors name `<field>.<resource>`.
Status validateThresholds(const policy::ArgsReader& r, const std::string& field, const policy::ResourceThresholds& t,
                          const std::string& prefix);

// `evictableNamespaces: {include, exclude}`, read by hand rather than with readNamespaces: upstream
// rejects any include list with its own message (checkEvictableNamespaces), before and instead of
// the shared include/exclude check.
Status readEvictableNamespaces(policy::ArgsReader& r, std::vector<std::string>& include,
                               std::vector<std::string>& exclude);
Status checkEvictableNamespaces(const policy::ArgsReader& r, const std::vector<std::string>& include);

// `metricsUtilization` (read with readRaw) refused when set: silently falling back to requests
// would balance on numbers the operator did not ask for.
Status rejectMetricsUtilization(const policy::ArgsReader& r, const policy::RawArgs& metrics);

}  // namespace kdesched::plugins::nodeusage
