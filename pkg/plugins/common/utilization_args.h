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

// HighNodeUtilization's `metricsUtilization` (read with readRaw) refused when set: upstream v0.36's
// HighNodeUtilization has no such field (its strict decoder refuses it too), and balancing on
// requests instead would not be what the operator asked for.
Status rejectMetricsUtilization(const policy::ArgsReader& r, const policy::RawArgs& metrics);

}  // namespace kdesched::plugins::nodeusage
