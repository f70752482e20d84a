// Upstream: LowNodeUtilization (plugins/nodeutilization/).
// Its args: upstream's names, defaults and validation messages (types.go, defaults.go and validation.go there).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/plugins/common/utilization_args.h"
#include "pkg/policy/args.h"

namespace kdesched::plugins::lownodeutilization {

inline constexpr const char* kName = "LowNodeUtilization";

using nodeusage::MetricsUtilization;

struct Args {
  // Resource name → percent in [0, 100]; both maps name the same resources.
  policy::ResourceThresholds thresholds;
  policy::ResourceThresholds targetThresholds;
  // The thresholds are deviations from the mean usage of the cycle's nodes.
  bool useDeviationThresholds = false;
  // Act only when more than this many nodes are underutilized (Go int: negative is legal).
  std::int64_t numberOfNodes = 0;
  // evictableNamespaces.exclude: these pods count toward usage but are never evicted.
  std::vector<std::string> excludedNamespaces;
  // evictionLimits.node: evictions per source node within one run of this plugin.
  std::optional<std::uint32_t> evictionLimitNode;
  // Set when `metricsUtilization` is (null counts as unset, as for upstream's pointer).
  std::optional<MetricsUtilization> metricsUtilization;
};

// Decodes strictly and validates with upstream's messages (validation.go); errors name the field
// path. Which source metricsUtilization resolves to, and whether the policy configures it, is
// decided when the plugin is built (lownodeutilization.h).
Result<Args> decodeArgs(const policy::RawArgs& raw, policy::Warnings& warnings);

}  // namespace kdesched::plugins::lownodeutilization
