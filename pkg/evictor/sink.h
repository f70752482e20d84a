// Where decisions go. Plan, dry-run and API sinks receive the same decisions; a test that passes in
// plan mode tests the daemon's logic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkg/framework/landing.h"
#include "pkg/framework/plugin.h"

namespace kdesched::evictor {

// A make-before-break move (pkg/moves): the pod's Deployment is restarted (a new pod first, then
// the old one goes) instead of the pod being evicted.
struct MovePlan {
  std::string ns;
  std::string deployment;
  std::string uid;               // the Deployment's: a replaced Deployment is not restarted
  std::string resourceVersion;   // as read: a Deployment changed since is not restarted either
  std::int64_t generation = 0;   // as read; the restart makes it one more
  std::string rollout;           // for people: what the restart will do
  double deadlineSeconds = 600;  // the new pod Ready within this, or the move failed
};

// One eviction decision, with everything needed to explain it.
struct Decision {
  const api::Pod* pod = nullptr;
  std::string node;
  std::string plugin;
  std::string profile;
  std::string reason;  // the rule broken
  // Where the pod's replacement is expected to land: estimated by the chain for the evictions it
  // lets through (information only, decided after every check), so every sink says the same.
  framework::Landing landing = {};
  // Set: a move, not an eviction. The chain counts it against the limits and the gates like one.
  std::optional<MovePlan> move = {};
  // Not a move though moves are on and apply to the pod's kind of workload: why (for plans).
  std::string noMove = {};
};

// The eviction log lines' expected_node: the node, "none" when the pod fits nowhere, "" unestimated.
std::string expectedNode(const framework::Landing& landing);

// A pod a plugin wanted that the chain refused.
struct RefusedDecision {
  Decision wanted;
  framework::EvictResult result;
};

class Sink {
 public:
  virtual ~Sink() = default;
  // Carries out an eviction the chain allowed. A sink that talks to the API server may still fail
  // (429 from a PDB, 404, 5xx): it says so with a refusal.
  virtual framework::EvictResult evict(const Decision& d) = 0;
  // Informs of a refusal by the chain (filter, limit, PDB), for explanations and metrics.
  virtual void refused(const RefusedDecision& r) = 0;
};

// Collects decisions for `kdesched plan`.
class PlanSink : public Sink {
 public:
  framework::EvictResult evict(const Decision& d) override;
  void refused(const RefusedDecision& r) override;
  const std::vector<Decision>& evictions() const { return evictions_; }
  const std::vector<RefusedDecision>& refusals() const { return refusals_; }

 private:
  std::vector<Decision> evictions_;
  std::vector<RefusedDecision> refusals_;
};

// Logs each decision (one line) and evicts nothing.
class DryRunSink : public Sink {
 public:
  framework::EvictResult evict(const Decision& d) override;
  void refused(const RefusedDecision& r) override;
};

}  // namespace kdesched::evictor
