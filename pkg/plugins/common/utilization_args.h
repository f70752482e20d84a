// Args both node-utilization plugins read the same way (upstream: nodeutilization/validation.go).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/policy/args.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::nodeusage {

// Upstream's validateThresholds: non-empty, each percentage in [0, 100]. `prefix` starts each
// message, as upstream's callers wrap it ("thresholds config is not valid: " for
// LowNodeUtilization, nothing for HighNodeUtilization). Errors name `<field>.<resource>`.
// An empty resource name loads with a warning, as upstream loads it: no node has such a resource,
// so, like any extended resource no node has, it leaves no room to move pods to.
Status validateThresholds(const policy::ArgsReader& r, const std::string& field, const policy::ResourceThresholds& t,
                          const std::string& prefix, policy::Warnings& warnings);

// `evictableNamespaces: {include, exclude}`, read by hand rather than with readNamespaces: upstream
// rejects any include list with its own message (checkEvictableNamespaces), before and instead of
// the shared include/exclude check.
Status readEvictableNamespaces(policy::ArgsReader& r, std::vector<std::string>& include,
                               std::vector<std::string>& exclude);
Status checkEvictableNamespaces(const policy::ArgsReader& r, const std::vector<std::string>& include);

// `metricsUtilization`: balance by measured usage instead of requests (LowNodeUtilization:
// upstream v0.34+; HighNodeUtilization: kdesched only, upstream v0.36 refuses the field).
struct MetricsUtilization {
  bool metricsServer = false;  // deprecated: the same as source KubernetesMetrics
  std::string source;          // as written; upstream fails every cycle on a value it does not know
  bool prometheusSet = false;  // `prometheus:` present
  std::string prometheusQuery;
};

// Reads `metricsUtilization` when present (null counts as unset, as for upstream's pointer).
Status readMetricsUtilization(policy::ArgsReader& r, std::optional<MetricsUtilization>& out);
// Upstream's ValidateLowNodeUtilizationArgs for metricsUtilization, in its order.
Status validateMetricsUtilization(const policy::ArgsReader& r, const MetricsUtilization& m);

}  // namespace kdesched::plugins::nodeusage
