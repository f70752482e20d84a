// `kdesched plan --explain ns/name`: what every profile and plugin made of the pods asked about, in
// the order it happened. The Handle records the plugins' verdicts (framework/verdict.h), the
// filters' refusals and the evictor's answers; the cycle records, around the plugin runs, the pods
// no plugin could see and those a plugin said nothing about. Nobody asking costs one null pointer
// test: a reason is rendered only for a pod that is asked about.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/labels.h"
#include "pkg/api/types.h"
#include "pkg/cluster/snapshot.h"

namespace kdesched::framework {

// skipped: the plugin passed over the pod (not a candidate, excluded by namespaces or
// labelSelector, out of scope); refused: the evictor (a filter, a limit, a PDB, anti-flapping)
// said no; evicted: it went; moved: its Deployment was restarted to replace it (pkg/moves);
// excluded: before any plugin (its node is not among the cycle's); helped: a pending pod a plugin
// evicted others to make room for (MakeRoomForPendingPods).
enum class ExplainOutcome { Excluded, Skipped, Refused, Evicted, Moved, Helped };
std::string_view toString(ExplainOutcome o);

struct ExplainStep {
  std::string profile;  // "" for the cycle itself
  std::string plugin;
  ExplainOutcome outcome = ExplainOutcome::Skipped;
  std::string by;    // who refused or excluded: a filter plugin, "maxNoOfPodsToEvictPerNode", a PDB
  std::string kind;  // the refusal kind (Filter, Pdb, ...), "" unless refused
  std::string why;
};

class Explainer {
 public:
  // `keys`: "namespace/name", in the order asked (a repeated key is asked once).
  explicit Explainer(const std::vector<std::string>& keys);

  bool wants(const api::Pod& pod) const;
  // Appends, unless it repeats the pod's last step word for word (a plugin that asks the filters
  // twice about one pod says it once).
  void record(const api::Pod& pod, ExplainStep step);

  struct Asked {
    std::string ns;
    std::string name;
    std::vector<ExplainStep> steps;
  };
  const std::vector<Asked>& asked() const { return asked_; }

  // Before the plugins run: an asked pod no plugin can see (unbound, its node not among the
  // cycle's, or the cycle skipped for `skipped`, when not empty) gets its one answer. The others
  // stay open for afterPlugin.
  // Some plugin of the cycle judges unbound pods (Plugin::judgesUnboundPods): an asked unbound pod
  // gets its answer from it, not "not bound to a node". Set before cycleStarts.
  void setUnboundJudged(bool judged) { unboundJudged_ = judged; }
  void cycleStarts(const cluster::Snapshot& snapshot, const std::vector<const api::Node*>& nodes,
                   const std::optional<api::LabelSelector>& nodeSelector, const std::string& skipped);
  // After a plugin run: an open pod the plugin said nothing about still gets its line (evicted
  // earlier, terminal, out of the run's scope, or not a candidate). `inScope` is null for a run
  // that may act on every pod.
  void afterPlugin(const std::string& profile, const std::string& plugin,
                   const std::function<bool(const api::Pod&)>& inScope);

 private:
  Asked* find(const api::Pod& pod);
  bool has(const Asked& a, std::string_view profile, std::string_view plugin) const;
  std::vector<const api::Pod*> open_;  // asked pods the plugins may see
  bool unboundJudged_ = false;
  std::vector<Asked> asked_;
};

}  // namespace kdesched::framework
