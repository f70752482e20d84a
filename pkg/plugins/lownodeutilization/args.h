// Upstream: LowNodeUtilization (plugins/nodeutilization/).
// Its args: upstream's names, defaults and validation messages (reference §2.5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/policy/args.h"

namespace kdesched::plugins::lownodeutilization {

inline constexpr const char* kName = "LowNodeUtilization";

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
};

// Decodes strictly and validates with upstream's messages; errors name the field path.
// metricsUtilization is rejected: kdesched measures usage from pod requests only.
Result<Args> decodeArgs(const policy::RawArgs& raw);

}  // namespace kdesched::plugins::lownodeutilization
