// The cycle runner: the deschedule plugins of all profiles (profile order), then the balance
// plugins of all profiles, on one consistent snapshot. Plugin errors are logged, never abort.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/api/labels.h"
#include "pkg/framework/profile.h"

namespace kdesched::framework {

// Hands each profile its evictor (filters of that profile + the shared limits, PDB budget, sink).
class EvictorProvider {
 public:
  virtual ~EvictorProvider() = default;
  virtual void beginCycle(const cluster::Snapshot& snapshot, CycleState& state) = 0;
  virtual Evictor& forProfile(const Profile& profile) = 0;
};

// Observes plugin runs (metrics).
class CycleObserver {
 public:
  virtual ~CycleObserver() = default;
  virtual void pluginFinished(const std::string& profile, const std::string& plugin, double seconds,
                              const Status& status) = 0;
};

enum class ExtensionPoint { Deschedule, Balance };
std::string_view toString(ExtensionPoint p);

struct PluginRun {
  std::string profile;
  std::string plugin;
  ExtensionPoint extensionPoint = ExtensionPoint::Deschedule;
  double seconds = 0;
  Status status;
};

struct CycleResult {
  bool skipped = false;
  std::string skipReason;
  std::size_t nodes = 0;
  std::vector<PluginRun> runs;
  double seconds = 0;
};

// Restricts which plugins run and on which pods (event-triggered runs). Defaults: everything.
struct CycleScope {
  bool runDeschedule = true;
  bool runBalance = true;
  std::vector<std::string> plugins;  // only these plugin names (empty: all)
  PodScope pods;                     // deschedule candidates (null: all pods)
  Explainer* explain = nullptr;      // `plan --explain`: records what happened to the asked pods
};

// The cycle's nodes: ready (no Ready condition other than True) and matching `nodeSelector`.
std::vector<const api::Node*> cycleNodes(const cluster::Snapshot& snapshot,
                                         const std::optional<api::LabelSelector>& nodeSelector);

// `clock` times the cycle and each plugin run; `compat` is the policy's `kdesched: {compat: ...}`;
// `usage` is the measured usage the cycle's usage plugins read (null: none, they skip).
CycleResult runCycle(const std::vector<Profile>& profiles, const cluster::Snapshot& snapshot,
                     const std::optional<api::LabelSelector>& nodeSelector, EvictorProvider& evictors, Clock& clock,
                     CycleObserver* observer = nullptr, const CycleScope& scope = {}, const policy::Compat& compat = {},
                     const usage::ClusterUsage* usage = nullptr);

// What the profiles' usage plugins need from the metrics sources.
usage::Needs usageNeeds(const std::vector<Profile>& profiles);
// Whether any plugin of the profiles judges unbound pods (Plugin::judgesUnboundPods).
bool judgesUnboundPods(const std::vector<Profile>& profiles);
// Whether any plugin of the profiles reads pod status conditions (Plugin::readsPodConditions).
bool readsPodConditions(const std::vector<Profile>& profiles);

}  // namespace kdesched::framework
