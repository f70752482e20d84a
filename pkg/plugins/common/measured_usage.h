// Node usage from a metrics source instead of pod requests (upstream: nodeutilization's
// actualUsageClient and prometheusUsageClient), for the plugins whose metricsUtilization is set.
// Safer than upstream: a node whose sample is missing, non-finite or stale is left out of the
// classification (upstream fails the whole plugin), and nothing here ever falls back to requests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/plugins/common/node_usage.h"
#include "pkg/plugins/common/usage_choice.h"
#include "pkg/usage/usage.h"

namespace kdesched::plugins::nodeusage {

struct Measured {
  std::vector<NodeUsage> nodes;  // the cycle's nodes with a usable sample, in the cycle's order
  // The nodes left out and why: "n3 (no sample)", "n4 (sample 300 s old)".
  std::vector<std::string> leftOut;
};

// Usage of the cycle's nodes by `readings`: cpu and memory (KubernetesMetrics) or MetricResource
// (Prometheus, the score × 100 of a capacity of 100) from each node's sample, `pods` = the node's
// live pods. Pods evicted earlier in the cycle take their PodMetrics usage with them. A tracked
// resource the source cannot report (an extended resource with metrics-server) is an error, with
// upstream's message.
Result<Measured> measureByUsage(const framework::Handle& h, const std::vector<api::Symbol>& tracked,
                                const usage::SourceReadings& readings, const usage::ClusterUsage& cluster);

// A pod's PodMetrics usage per tracked resource (pods: 1), for the accounting when it moves;
// nullopt when its usage is unknown (upstream cannot read it either, and skips the pod).
std::optional<PerResource<std::int64_t>> podUsage(const std::vector<api::Symbol>& tracked,
                                                  const usage::SourceReadings& readings, const api::Pod& pod);

// Why a node's sample cannot be used ("no sample", "sample is NaN", "sample 300 s old, ..."), or
// nullopt when it can. Without `kdeschedRules` (compat usageGapLeavesNodeOut: upstream) only a
// missing or non-finite sample is unusable. The daemon counts such nodes with the same rule.
std::optional<std::string> sampleProblem(const usage::NodeSample* s, const usage::SourceReadings& readings,
                                         const usage::ClusterUsage& cluster, bool kdeschedRules);

// "metrics-server" / "Prometheus query <q>": who measured, for reasons and logs.
std::string originOf(const usage::SourceReadings& readings, const std::string& query);

// The node usage a run of `plugin` classifies: by requests, or by the chosen source's readings of
// this cycle (set in `readings`). A broken choice, a source that gave nothing and one without a
// usable sample for any node are errors that skip the run, never a fallback to requests; nodes left
// out are named in one warning.
Result<std::vector<NodeUsage>> measureChosen(framework::Handle& h, const std::vector<api::Symbol>& tracked,
                                             const UsageChoice& choice, const std::string& plugin,
                                             const usage::SourceReadings*& readings);

}  // namespace kdesched::plugins::nodeusage
