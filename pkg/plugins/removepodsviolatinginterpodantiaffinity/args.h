// Upstream: RemovePodsViolatingInterPodAntiAffinity (plugins/removepodsviolatinginterpodantiaffinity/).
// Its args: upstream's names, defaults and validation messages (types.go, defaults.go and validation.go there).
#pragma once

#include "pkg/base/status.h"
#include "pkg/plugins/common/pod_list_filter.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::removepodsviolatinginterpodantiaffinity {

inline constexpr const char* kName = "RemovePodsViolatingInterPodAntiAffinity";

struct Args {
  PodListFilter filter;  // namespaces, labelSelector; both unset by default (every pod is listed)
};

// Decodes strictly and validates; errors name the field path.
Result<Args> decodeArgs(const policy::RawArgs& raw);

}  // namespace kdesched::plugins::removepodsviolatinginterpodantiaffinity
