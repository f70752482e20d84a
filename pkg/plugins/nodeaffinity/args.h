// Upstream: RemovePodsViolatingNodeAffinity (plugins/removepodsviolatingnodeaffinity/).
// Its args: upstream's names, defaults and validation messages (types.go, defaults.go and validation.go there).
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
  // Required and non-empty in the policy; holds its kRequired and kPreferred entries, in list order
  // (possibly none, when every value was unknown).
  std::vector<std::string> nodeAffinityType;
  PodListFilter filter;  // namespaces, labelSelector; both unset by default (every pod is listed)
};

// Decodes strictly and validates; errors name the field path. An unknown nodeAffinityType value
// is dropped with a warning (upstream logs it at run time and skips it); an absent or empty list is
// an error, as upstream.
Result<Args> decodeArgs(const policy::RawArgs& raw, policy::Warnings& warnings);

}  // namespace kdesched::plugins::nodeaffinity
