// Upstream: RemovePodsViolatingNodeAffinity (plugins/removepodsviolatingnodeaffinity/).
// Its args: upstream's names, defaults and validation messages (reference §2.2).
#pragma once

#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/plugins/common/pod_list_filter.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::nodeaffinity {

inline constexpr const char* kName = "RemovePodsViolatingNodeAffinity";
inline constexpr const char* kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
inline constexpr const char* kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";

struct Args {
  // Required, non-empty; each entry kRequired or kPreferred, checked in list order.
  std::vector<std::string> nodeAffinityType;
  PodListFilter filter;  // namespaces, labelSelector; both unset by default (every pod is listed)
};

// Decodes strictly and validates; errors name the field path. Unlike upstream (which logs an
// unknown nodeAffinityType at run time and skips it), an unknown type is a load-time error.
Result<Args> decodeArgs(const policy::RawArgs& raw);

}  // namespace kdesched::plugins::nodeaffinity
