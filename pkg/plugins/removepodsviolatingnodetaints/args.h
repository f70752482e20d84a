// Upstream: RemovePodsViolatingNodeTaints (plugins/removepodsviolatingnodetaints/).
// Its args: upstream's names, defaults and validation messages (types.go, defaults.go and validation.go there).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/base/status.h"
#include "pkg/plugins/common/pod_list_filter.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::removepodsviolatingnodetaints {

inline constexpr const char* kName = "RemovePodsViolatingNodeTaints";

struct Args {
  // Each entry a taint key or `key=value`. A taint listed here is never a reason to evict.
  std::vector<std::string> excludedTaints;
  // Unset: every taint counts. Set (even to an empty list, as upstream's non-nil slice): only the
  // taints listed count, so `includedTaints: []` makes the plugin evict nothing.
  std::optional<std::vector<std::string>> includedTaints;
  // PreferNoSchedule taints count too; NoSchedule taints always do, NoExecute never (the kubelet's
  // taint manager evicts for those).
  bool includePreferNoSchedule = false;
  PodListFilter filter;  // namespaces, labelSelector; both unset by default (every pod is listed)

  // Upstream's taint filter: the effect counts, the taint is not excluded, and it is included.
  bool considers(const api::Taint& taint) const;
};

// Decodes strictly and validates with upstream's messages; errors name the field path.
Result<Args> decodeArgs(const policy::RawArgs& raw);

}  // namespace kdesched::plugins::removepodsviolatingnodetaints
