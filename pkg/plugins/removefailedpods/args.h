// Upstream: RemoveFailedPods (plugins/removefailedpods/). Its args: upstream's names, defaults
// and validation messages (types.go, defaults.go and validation.go there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pkg/api/symbol.h"
#include "pkg/base/status.h"
#include "pkg/plugins/common/pod_list_filter.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::removefailedpods {

inline constexpr const char* kName = "RemoveFailedPods";
inline constexpr std::uint32_t kDefaultMinPodLifetimeSeconds = 3600;

struct Args {
  // Set to 3600 when absent or null, as upstream's defaulting does when the policy is loaded; an
  // explicit 0 stays 0 (no age requirement).
  std::uint32_t minPodLifetimeSeconds = kDefaultMinPodLifetimeSeconds;
  std::vector<std::string> excludeOwnerKinds;  // skip a pod when any owner reference has one of these kinds
  std::vector<api::Symbol> reasons;            // empty: any reason
  std::vector<std::int32_t> exitCodes;         // empty: any exit code
  bool includingInitContainers = false;
  PodListFilter filter;  // namespaces, labelSelector
};

// Decodes strictly, validates (as upstream, before defaulting), then defaults. Errors name the
// field path.
Result<Args> decodeArgs(const policy::RawArgs& raw);

}  // namespace kdesched::plugins::removefailedpods
