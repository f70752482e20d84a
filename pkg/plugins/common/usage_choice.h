// Which usage a LowNodeUtilization or HighNodeUtilization instance balances by, resolved once when
// the policy loads: requests, or a metrics source (upstream: usageClientForMetrics and the checks
// around it, LowNodeUtilization's; HighNodeUtilization by usage is kdesched's own and follows them).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/framework/registry.h"
#include "pkg/plugins/common/utilization_args.h"
#include "pkg/usage/usage.h"

namespace kdesched::plugins::nodeusage {

struct UsageChoice {
  std::optional<usage::Source> source;  // nullopt: requests
  std::string query;                    // Prometheus
  // Set when upstream accepts the args but fails every cycle with "error initializing usage
  // client: <broken>" (no source, an unknown one, or one the policy's top level does not
  // configure): kdesched loads them too, warns, and fails each cycle the same way.
  std::optional<std::string> broken;
};

// The threshold maps of a plugin's args by field name ("thresholds", "targetThresholds"); the
// first is the one whose resources are checked against what the source reports.
using ThresholdFields = std::vector<std::pair<std::string, const policy::ResourceThresholds*>>;

// Resolves `metricsUtilization` against the policy's providers. Errors are upstream's
// plugin-construction errors (Prometheus thresholds other than exactly MetricResource), at
// `argsPath`; warnings, naming `plugin`, go to ctx.warn.
Result<UsageChoice> chooseUsage(const std::optional<MetricsUtilization>& metricsUtilization,
                                const ThresholdFields& thresholds, const std::string& plugin,
                                const framework::BuildContext& ctx, const std::string& argsPath);

}  // namespace kdesched::plugins::nodeusage
