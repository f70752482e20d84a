// The workload a pod belongs to, read from the pod alone (no API request): its controller, with a
// ReplicaSet that a Deployment made (named <deployment>-<pod-template-hash>, the hash being the
// pod's pod-template-hash label) read as that Deployment, so a rollout keeps one workload. Metrics
// count evictions per workload (pkg/metrics/owner_evictions.h); budgets pace them per workload
// (pkg/evictor/budget_gate.h).
#pragma once

#include <string>

#include "pkg/api/types.h"

namespace kdesched::api {

// A pod without a controller: kind and name empty.
struct Workload {
  std::string kind;
  std::string name;
  bool operator==(const Workload&) const = default;
  auto operator<=>(const Workload&) const = default;
};
Workload workloadOf(const Pod& pod);

}  // namespace kdesched::api
