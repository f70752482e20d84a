// PodDisruptionBudget accounting for one cycle: a PDB never loses more pods in a cycle than it
// allows, mirroring what the API server's eviction subresource would answer.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/cluster/snapshot.h"

namespace kdesched::evictor {

struct PdbCheck {
  bool allowed = true;
  std::string pdb;     // "namespace/name" of the deciding PDB ("" when none matched)
  std::string detail;  // for people
};

class PdbBudget {
 public:
  // unreadyNeedsBudget false is the API server's rule (compat unreadyPodNeedsBudget: upstream): an
  // unready pod goes without budget when its PDB is healthy enough or says AlwaysAllow.
  explicit PdbBudget(const cluster::Snapshot& snapshot, bool unreadyNeedsBudget = true)
      : snapshot_(snapshot), unreadyNeedsBudget_(unreadyNeedsBudget) {}

  // Would an eviction of `pod` be allowed now? Pods that are terminating, Pending, Succeeded or
  // Failed bypass PDBs (the API server lets them go); a pod matched by two or more PDBs is refused
  // (the API server refuses it too); a PDB whose status is older than its spec has no budget.
  PdbCheck check(const api::Pod& pod) const;
  // Records a successful eviction against the pod's PDB.
  void consume(const api::Pod& pod);

  // disruptionsAllowed from status when the disruption controller has filled it, else computed
  // from spec the way the controller does (expected = matching pods, healthy = Ready ones).
  std::int32_t allowedDisruptions(const api::PodDisruptionBudget& pdb) const;

 private:
  std::vector<const api::PodDisruptionBudget*> matching(const api::Pod& pod) const;
  bool unreadyGoesFree(const api::Pod& pod, const api::PodDisruptionBudget& pdb) const;
  const cluster::Snapshot& snapshot_;
  bool unreadyNeedsBudget_;
  std::unordered_map<const api::PodDisruptionBudget*, std::int32_t> spent_;
};

}  // namespace kdesched::evictor
