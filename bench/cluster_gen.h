// A synthetic cluster with a realistic mix, written as the JSON `kubectl get ... -o json` prints:
// most pods owned by ReplicaSets; a share of workloads with hostname anti-affinity, zone spread
// constraints, node affinity and PDBs; labels and requests varied; and planted violations.
#pragma once

#include <cstdint>
#include <string>

namespace kdesched::bench {

struct GenOptions {
  int nodes = 1000;
  int pods = 30000;
  std::uint32_t seed = 1;
  int zones = 3;
  double antiAffinityShare = 0.30;  // workloads with required hostname anti-affinity against themselves
  double spreadShare = 0.30;        // workloads with a zone spread constraint (maxSkew 1, DoNotSchedule)
  double nodeAffinityShare = 0.20;  // workloads requiring disk=ssd
  double pdbShare = 0.20;           // workloads with a PDB (maxUnavailable 1)
  int violations = 300;             // planted violations (anti-affinity, node affinity, spread)
};

struct GenStats {
  int workloads = 0;
  int pods = 0;
  int pdbs = 0;
  int plantedAntiAffinity = 0;
  int plantedNodeAffinity = 0;
  int plantedSpread = 0;
};

// The snapshot as one JSON `v1 List` (nodes, namespaces, PDBs, pods).
std::string generateSnapshotJson(const GenOptions& o, GenStats* stats = nullptr);

}  // namespace kdesched::bench
