// Upstream: PodLifeTime (plugins/podlifetime/). Its args: upstream v0.36's names, defaults and
// validation messages (types.go, defaults.go and validation.go there), each error naming its field path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/plugins/common/pod_list_filter.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::podlifetime {

inline constexpr const char* kName = "PodLifeTime";

// One `conditions` entry: every field set must match one status condition (AND); unset fields are
// not checked. With minTimeSinceLastTransitionSeconds, the condition must also have transitioned
// at least that many seconds ago.
struct ConditionFilter {
  std::string type;
  std::string status;
  std::string reason;
  std::optional<std::uint64_t> minTimeSinceLastTransitionSeconds;
};

struct Args {
  // Unset by default; a pod matches when it is strictly older (whole seconds since creation).
  std::optional<std::uint64_t> maxPodLifeTimeSeconds;
  // Phases, status reasons, container waiting and terminated reasons (upstream's allowed list).
  std::vector<std::string> states;
  std::vector<ConditionFilter> conditions;  // a pod matches when any condition matches any filter
  std::vector<std::int32_t> exitCodes;      // terminated containers' exit codes
  // At most one of them non-empty; include wins over exclude when read (validation forbids both).
  std::vector<std::string> ownerKindsInclude;
  std::vector<std::string> ownerKindsExclude;
  bool includingInitContainers = false;       // states and exitCodes also look at init containers
  bool includingEphemeralContainers = false;  // states also look at ephemeral containers
  PodListFilter filter;                       // namespaces, labelSelector; unset by default
};

// Decodes strictly and validates (first error wins; upstream aggregates them all).
Result<Args> decodeArgs(const policy::RawArgs& raw);

// Upstream's allowed states, sorted, as its validation message prints them ("[A B C]").
const std::vector<std::string>& allowedStates();

}  // namespace kdesched::plugins::podlifetime
