// `kdesched plan`: one cycle on a snapshot file with the plan sink, rendered for people (table) or
// scripts (json, a stable contract).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/base/status.h"
#include "pkg/cluster/loader.h"
#include "pkg/engine/engine.h"
#include "pkg/usage/usage.h"

namespace kdesched::moves {
class Workloads;
}

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
  // `--explain ns/name` (repeatable): the pods whose fate every profile and plugin explains, after
  // the plan. A name the cluster state does not hold is said so, and the plan then fails (exit 2).
  std::vector<std::string> explain;
  // The policy itself rather than a file (read from the installed daemon's ConfigMap by the
  // kubectl plugin); policyPath then names where it came from, for errors. Live plans only.
  std::string policyYaml;
  // Print only what --explain asked (the tables, or in JSON the one pod's object, an array for
  // several), not the plan around it: `kubectl kdesched explain POD`.
  bool explainOnly = false;
};

// Runs the plan on options.snapshotPath and writes it to `out`. Bad input returns an error (the
// caller exits 2).
Status runPlan(const PlanOptions& options, std::ostream& out);

// The cluster state one plan decides on, wherever it was read: a snapshot file (runPlan) or the
// API server (pkg/daemon/live_plan.h). Two inputs that hold the same gives the same plan, byte for
// byte: that is what makes a live plan's saved snapshot replay exactly.
struct PlanInput {
  cluster::SnapshotPtr snapshot;
  cluster::LoadReport report;
  usage::SourceReadings metrics;  // the NodeMetrics and PodMetrics read with it (KubernetesMetrics)
  std::string sourceName;         // for errors: the snapshot's path, or what was read live
  bool live = false;              // read from the API server: errors give a live hint, not a file's
  // Where a policy with moves reads Deployments (null: a snapshot file, which holds none, and each
  // move candidate says so).
  moves::Workloads* workloads = nullptr;
};

// The clock a plan's engine is built with: --now, else the system clock.
framework::WallSeconds planClock(const PlanOptions& options);

// One cycle of `engine` on `input` with the plan sink, written to `out` as options.format says.
Status writePlan(const engine::Engine& engine, PlanInput input, const PlanOptions& options, std::ostream& out);

}  // namespace kdesched::plan
