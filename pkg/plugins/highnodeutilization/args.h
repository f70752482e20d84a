// Upstream: HighNodeUtilization (plugins/nodeutilization/).
// Its args: upstream's names, defaults and validation messages (types.go, defaults.go and validation.go there).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/plugins/common/utilization_args.h"
#include "pkg/policy/args.h"

namespace kdesched::plugins::highnodeutilization {

inline constexpr const char* kName = "HighNodeUtilization";
inline constexpr const char* kOnlyThresholdingResources = "OnlyThresholdingResources";

struct Args {
  // Resource name → percent in [0, 100]; required. A node at or below every one is underutilized.
  policy::ResourceThresholds thresholds;
  // Act only when more than this many nodes are underutilized (Go int: negative is legal).
  std::int64_t numberOfNodes = 0;
  // OnlyThresholdingResources: evict only pods requesting at least one threshold resource.
  bool onlyThresholdingResources = false;
  // evictableNamespaces.exclude: these pods count toward usage but are never evicted.
  std::vector<std::string> excludedNamespaces;
  // kdesched only (upstream v0.36 refuses the field): classify by measured usage, as
  // LowNodeUtilization's metricsUtilization, with the same sources and validation.
  std::optional<nodeusage::MetricsUtilization> metricsUtilization;
};

// Decodes strictly and validates with upstream's messages; errors name the field path.
// metricsUtilization is validated as LowNodeUtilization's.
Result<Args> decodeArgs(const policy::RawArgs& raw, policy::Warnings& warnings);

}  // namespace kdesched::plugins::highnodeutilization
