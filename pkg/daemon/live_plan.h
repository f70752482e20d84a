// `kdesched plan` on a live cluster: the state is read through the daemon's list path (a paged
// LIST of every cached resource through kube::Client, decoded by the daemon's decoder, as a
// reflector's LIST sync: the pages are what --save-snapshot keeps, so never a watch-list; the
// policy's PriorityClass by GET; NodeMetrics and PodMetrics once, by the collector's decoder, when
// the policy balances by metrics-server usage), one cycle runs with the plan sink, and the plan is
// printed as for a snapshot file. Nothing is written to the cluster: no Eviction, no Event, no
// Lease; the verbs needed are list (and get on a PriorityClass the policy names).
//
// With a save stream, every answer the plan used is written to it as the API server sent it, one
// JSON document a line (the LIST pages, the PriorityClass), a snapshot `kdesched plan --snapshot`
// reads. Replayed with the same policy and `--now` at the read time, it gives the same plan byte for
// byte: both decide on the same objects with the same report (plan::PlanInput). No Secret is read,
// and no credential is written.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "pkg/api/types.h"
#include "pkg/kube/client.h"
#include "pkg/plan/plan.h"

namespace kdesched::daemon {

// Why no plan was written, and the exit code: kExitBadInput for the policy or a flag,
// kExitFailure when the cluster could not be read (unreachable, refused, an object kdesched
// cannot decode).
struct LivePlanFailure {
  int exitCode = 0;
  std::string message;
};

// Reads the cluster through `client` and writes the plan to `out`. `options`: the policy, the
// output format, --now and --prometheus-result (Prometheus is never queried live: its answer is a
// file, as offline); not snapshotPath. The plan is made at `readAt` (whole seconds, normally when
// the read began) unless options.now pins another time; a replay passes that time as --now. With
// `save`, what was read is written to it before the cycle runs (also when the plan then fails on
// an object it cannot decode, so the file shows that object).
std::optional<LivePlanFailure> runLivePlan(kube::Client& client, const plan::PlanOptions& options,
                                           api::Timestamp readAt, std::ostream& out, std::ostream* save = nullptr);

}  // namespace kdesched::daemon
