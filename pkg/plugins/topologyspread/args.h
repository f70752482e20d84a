// Upstream: RemovePodsViolatingTopologySpreadConstraint (plugins/removepodsviolatingtopologyspreadconstraint/).
// Its args: upstream's names, defaults and validation messages (types.go, defaults.go and validation.go there).
#pragma once

#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/plugins/common/pod_list_filter.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::topologyspread {

inline constexpr const char* kName = "RemovePodsViolatingTopologySpreadConstraint";

struct Args {
  // Which whenUnsatisfiable kinds to balance; never empty after decoding ([DoNotSchedule] by default).
  std::vector<api::UnsatisfiableAction> constraints = {api::UnsatisfiableAction::DoNotSchedule};
  // Only pick pods that fit some node of a below-average domain (default true, as upstream).
  bool topologyBalanceNodeFit = true;
  PodListFilter filter;  // namespaces, labelSelector

  bool balances(api::UnsatisfiableAction a) const;
};

// Decodes strictly, validates and defaults; errors name the field path.
Result<Args> decodeArgs(const policy::RawArgs& raw);

std::string_view toString(api::UnsatisfiableAction a);
std::string_view toString(api::InclusionPolicy p);

}  // namespace kdesched::plugins::topologyspread
