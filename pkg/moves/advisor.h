// Decides, for a pod a plugin picked, whether it moves instead of being evicted (move_advisor.h):
// a pod of a Deployment (through its ReplicaSet) whose eviction would leave the Deployment short
// of Ready pods (one replica, or a PDB with no budget), when a rollout restart makes the new pod
// before the old one goes, no rollout or other move is changing it, and it is in the moves' scope.
// Cheap checks come first: the Deployment is read from the API server only for a pod that passes
// them.
#pragma once

#include <memory>

#include "pkg/evictor/eviction_api.h"
#include "pkg/evictor/move_advisor.h"
#include "pkg/moves/deployment.h"
#include "pkg/moves/tracker.h"
#include "pkg/policy/extension.h"

namespace kdesched::moves {

// Where a pod's Deployment is read from.
class Workloads {
 public:
  virtual ~Workloads() = default;
  // The Deployment that controls ReplicaSet `ns`/`replicaSet`; an error says why there is none to
  // restart (a bare ReplicaSet, a failed read).
  virtual Result<DeploymentFacts> deploymentOf(const std::string& ns, const std::string& replicaSet) = 0;
};

// GETs of the ReplicaSet and of its Deployment (RBAC: get on apps replicasets and deployments).
class ApiWorkloads : public Workloads {
 public:
  explicit ApiWorkloads(evictor::EvictionApi& api) : api_(api) {}
  Result<DeploymentFacts> deploymentOf(const std::string& ns, const std::string& replicaSet) override;

 private:
  evictor::EvictionApi& api_;
};

// No Deployment objects at all (a snapshot file): every move says so.
class NoWorkloads : public Workloads {
 public:
  explicit NoWorkloads(std::string why) : why_(std::move(why)) {}
  Result<DeploymentFacts> deploymentOf(const std::string&, const std::string&) override { return Status::error(why_); }

 private:
  std::string why_;
};

class Advisor : public evictor::MoveAdvisor {
 public:
  // `tracker` (may be null: plan, dry run) holds the moves in flight and the failed ones.
  Advisor(policy::MovesConfig config, Workloads& workloads, MoveTracker* tracker);
  evictor::MoveOffer consider(const api::Pod& pod, const cluster::Snapshot& snapshot, bool pdbBlocks) override;

 private:
  policy::MovesConfig config_;
  Workloads& workloads_;
  MoveTracker* tracker_;
};

}  // namespace kdesched::moves
