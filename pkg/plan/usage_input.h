// The measured usage `kdesched plan` runs with: NodeMetrics and PodMetrics from the snapshot file
// and a saved Prometheus answer (--prometheus-result), checked against what the policy's plugins
// need. A plugin that balances by usage never falls back to requests, so usage the policy needs
// and the input lacks is an error naming what to add.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/base/status.h"
#include "pkg/usage/usage.h"

namespace kdesched::plan {

struct UsageInput {
  // What the snapshot held (the loader's KubernetesMetrics reading).
  usage::SourceReadings metrics;
  std::string snapshotPath;           // where it was read, for errors
  std::string prometheusResultPath;   // "" when not given
  std::optional<api::Timestamp> now;  // --now: staleness is judged against it
  bool live = false;                  // read from metrics-server now, not from a file
};

// The cycle's usage, or an error (exit 2). Notes from decoding join `warnings`.
Result<usage::ClusterUsage> planUsage(UsageInput input, const usage::Needs& needs, std::vector<std::string>& warnings);

}  // namespace kdesched::plan
