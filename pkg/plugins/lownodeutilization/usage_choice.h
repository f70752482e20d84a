// Which usage a LowNodeUtilization instance balances by, resolved once when the policy loads:
// requests, or a metrics source (upstream: usageClientForMetrics and the checks around it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/framework/registry.h"
#include "pkg/plugins/lownodeutilization/args.h"
#include "pkg/usage/usage.h"

namespace kdesched::plugins::lownodeutilization {

struct UsageChoice {
  std::optional<usage::Source> source;  // nullopt: requests
  std::string query;                    // Prometheus
  // Set when upstream accepts the args but fails every cycle with "error initializing usage
  // client: <broken>" (no source, an unknown one, or one the policy's top level does not
  // configure): kdesched loads them too, warns, and fails each cycle the same way.
  std::optional<std::string> broken;
};

// Resolves args.metricsUtilization against the policy's providers. Errors are upstream's
// plugin-construction errors (Prometheus thresholds other than exactly MetricResource), at
// `argsPath`; warnings go to ctx.warn.
Result<UsageChoice> chooseUsage(const Args& args, const framework::BuildContext& ctx, const std::string& argsPath);

}  // namespace kdesched::plugins::lownodeutilization
