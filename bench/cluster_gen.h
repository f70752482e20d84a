// A synthetic cluster with a realistic mix, written as the JSON `kubectl get ... -o json` prints:
// most pods owned by ReplicaSets; a share of workloads with hostname anti-affinity, zone spread
// constraints, node affinity and PDBs; labels and requests varied; and planted violations.
//
// The same generator feeds both benchmarks:
//  - `kdesched plan` / plugins_bench: a `v1 List` snapshot (format List);
//  - a kwok control plane (bench/load_cluster.py): one object per line (format NdJson), in creation
//    order (PriorityClasses, Namespaces, Nodes, ReplicaSets, PDBs, Pods), with kwok-managed nodes and
//    real ReplicaSet objects the pods point to (the loader fills in the ReplicaSets' server UIDs).
//
// With `metrics`, measured usage for balancing by usage (LowNodeUtilization/HighNodeUtilization
// `metricsUtilization`): NodeMetrics and PodMetrics for every node and pod, and optionally the
// answer of a Prometheus query scoring each node.
#pragma once

#include <cstdint>
#include <string>

namespace kdesched::bench {

enum class GenFormat {
  List,    // {"apiVersion":"v1","kind":"List","items":[...]}
  NdJson,  // one object per line, no wrapper
};

struct GenOptions {
  int nodes = 1000;
  int pods = 30000;
  std::uint32_t seed = 1;
  int zones = 3;
  // Namespaces the workloads are spread over. The first six are named default, shop, payments,
  // search, platform, batch; further ones ns-6, ns-7, ...
  int namespaces = 6;
  double antiAffinityShare = 0.30;  // workloads with required hostname anti-affinity against themselves
  double spreadShare = 0.30;        // workloads with a zone spread constraint (maxSkew 1, DoNotSchedule)
  double nodeAffinityShare = 0.20;  // workloads requiring disk=ssd
  double pdbShare = 0.20;           // workloads with a PDB (maxUnavailable 1)
  int violations = 300;             // planted violations, a third of each kind, one eviction each:
                                    // a replica beside its anti-affinity sibling, on an hdd node, or
                                    // in its sibling's zone (skew 2)
  // The last `idleShare` of the nodes (at least one when > 0) get no round-robin pods (only
  // anti-affinity replicas land there), so LowNodeUtilization finds underutilized nodes; the first
  // tenth gets `hotShare` of the other pods on top (overutilized nodes).
  double idleShare = 0.05;
  double hotShare = 0.15;
  GenFormat format = GenFormat::List;
  // Control-plane mode: nodes carry kwok's annotation (kwok.x-k8s.io/node=fake) and label
  // type=kwok; ReplicaSet objects are emitted (replicas and selector matching their pods); pods
  // point to them by name with uid "@rs:<namespace>/<name>", which the loader replaces.
  bool kwok = false;
  // Objects as the API server returns them (managedFields, default tolerations, the projected
  // service-account volume, full pod status with container statuses, node conditions/info):
  // ~4 KB per pod instead of ~1.2 KB, for decode throughput on realistic bytes.
  bool wire = false;
  // After the List, a metrics.k8s.io/v1beta1 NodeMetricsList and PodMetricsList as `kubectl get
  // --raw /apis/metrics.k8s.io/v1beta1/nodes` and `/pods` print them (format List only), which
  // `kdesched plan` reads. A pod uses its requests × its node's factor × its own jitter (0.8-1.2);
  // the factor is 1.2-1.5 on the hot tenth of the nodes and 0.8-1.2 elsewhere, so hot nodes are
  // hot by usage too. A node uses the sum of its pods plus 150m cpu and 768Mi for the system.
  // Deterministic per seed, and drawn apart from the cluster's random stream: the cluster itself
  // is the same with or without metrics.
  bool metrics = false;
};

// When the generated metrics were measured, as Unix seconds and as RFC 3339.
inline constexpr long long kMetricsUnixTime = 1793577585;  // 2026-11-01T23:59:45Z
inline constexpr const char* kMetricsTime = "2026-11-01T23:59:45Z";

struct GenStats {
  int namespaces = 0;
  int workloads = 0;
  int pods = 0;
  int pdbs = 0;
  int plantedAntiAffinity = 0;
  int plantedNodeAffinity = 0;
  int plantedSpread = 0;
};

// The snapshot in the requested format (a `v1 List` by default). With `prometheusAnswer`, also the
// JSON body of a Prometheus `/api/v1/query` answer scoring every node (label instance = node name)
// by its cpu usage / allocatable in [0, 1], the usage the metrics above report (computed whether or
// not `metrics` is set). `metrics` with format NdJson throws std::invalid_argument: the API server
// serves metrics from metrics-server, it does not store them.
std::string generateSnapshotJson(const GenOptions& o, GenStats* stats = nullptr,
                                 std::string* prometheusAnswer = nullptr);

}  // namespace kdesched::bench
