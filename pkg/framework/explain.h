// `kdesched plan --explain ns/name`: what every profile and plugin made of the pods asked about, in
// the order it happened. Plugins report through the Handle (Handle::explaining, Handle::passOver);
// the Handle itself records filter refusals, the evictor's answers and the pods it hides (evicted
// earlier, finished, out of scope). Nobody asking costs one null pointer test: reasons are built
// only for a pod that is asked about.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/types.h"

namespace kdesched::framework {

// skipped: the plugin passed over the pod (not a candidate, excluded by namespaces or
// labelSelector, out of scope); refused: the evictor (a filter, a limit, a PDB, anti-flapping)
// said no; evicted: it went; excluded: before any plugin (its node is not among the cycle's).
enum class ExplainOutcome { Excluded, Skipped, Refused, Evicted };
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
  // Steps recorded for `profile`/`plugin` since the start of the cycle, for any asked pod.
  bool has(const Asked& a, std::string_view profile, std::string_view plugin) const;

 private:
  Asked* find(const api::Pod& pod);
  std::vector<Asked> asked_;
};

}  // namespace kdesched::framework
