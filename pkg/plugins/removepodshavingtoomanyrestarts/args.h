// Upstream: RemovePodsHavingTooManyRestarts (plugins/removepodshavingtoomanyrestarts/). Its args:
// upstream's names, defaults and validation messages (types.go, defaults.go and validation.go there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pkg/api/symbol.h"
#include "pkg/base/status.h"
#include "pkg/plugins/common/pod_list_filter.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::removepodshavingtoomanyrestarts {

inline constexpr const char* kName = "RemovePodsHavingTooManyRestarts";

struct Args {
  std::int32_t podRestartThreshold = 0;  // required, at least 1
  bool includingInitContainers = false;  // add init containers' restarts, and their waiting reasons to states
  // Empty: any pod. Else the pod's phase (Running) or a container's waiting reason
  // (CrashLoopBackOff) must be one of them.
  std::vector<api::Symbol> states;
  PodListFilter filter;  // namespaces, labelSelector
};

Result<Args> decodeArgs(const policy::RawArgs& raw);

}  // namespace kdesched::plugins::removepodshavingtoomanyrestarts
