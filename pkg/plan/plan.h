// `kdesched plan`: one cycle on a snapshot file with the plan sink, rendered for people (table) or
// scripts (json, a stable contract).
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "pkg/api/types.h"
#include "pkg/base/status.h"
#include "pkg/cluster/loader.h"

namespace kdesched::plan {

enum class OutputFormat { Table, Json };

struct PlanOptions {
  std::string snapshotPath;
  std::string policyPath;
  OutputFormat format = OutputFormat::Table;
  std::optional<api::Timestamp> now;  // pins the clock for age-based checks (reproducible plans)
  std::size_t maxSnapshotBytes = cluster::kDefaultMaxSnapshotBytes;
  // A saved Prometheus /api/v1/query answer, for a policy whose LowNodeUtilization balances by a
  // Prometheus query ("" when not given).
  std::string prometheusResultPath;
};

// Runs the plan and writes it to `out`. Bad input returns an error (the caller exits 2).
Status runPlan(const PlanOptions& options, std::ostream& out);

}  // namespace kdesched::plan
