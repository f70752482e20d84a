// Make-before-break moves, as the eviction chain sees them: before a pod that a plugin picked is
// evicted, the advisor (pkg/moves) may offer to have its controller replace it instead, a new pod
// first and the old one after (a Deployment's rollout restart). The chain still applies its
// filters, limits and gates to a move; the PDB is not asked, as a surge takes no pod away first.
#pragma once

#include <optional>
#include <string>

#include "pkg/evictor/sink.h"

namespace kdesched::cluster {
class Snapshot;
}

namespace kdesched::evictor {

struct MoveOffer {
  std::optional<MovePlan> plan;  // set: move the pod instead of evicting it
  // Not set: why not, for a pod that moves would otherwise apply to (a StatefulSet, maxSurge 0, a
  // Deployment mid-rollout); empty when moves say nothing about the pod (out of their scope).
  std::string whyNot;
};

class MoveAdvisor {
 public:
  virtual ~MoveAdvisor() = default;
  // Called for each pod the chain would otherwise evict, with the run's snapshot. `pdbBlocks`:
  // its PodDisruptionBudget allows no disruption now.
  virtual MoveOffer consider(const api::Pod& pod, const cluster::Snapshot& snapshot, bool pdbBlocks) = 0;
};

}  // namespace kdesched::evictor
