// kdesched only (upstream has no such plugin): MakeRoomForPendingPods. Its args, defaults and
// validation; every error names its field path.
#pragma once

#include <cstdint>
#include <optional>

#include "pkg/base/status.h"
#include "pkg/plugins/common/pod_list_filter.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::makeroomforpendingpods {

inline constexpr const char* kName = "MakeRoomForPendingPods";

struct Args {
  // A pod is helped once PodScheduled=False, reason Unschedulable, has held this long (measured
  // from the condition's lastTransitionTime): the scheduler gets its own tries first.
  std::int64_t minPendingSeconds = 60;
  // Pending pods below this priority are not helped; unset: any priority.
  std::optional<std::int32_t> minPriority;
  // The most running pods moved for one pending pod. Each move is a restart of someone else's pod,
  // and the search grows with it, so it is bounded (kMaxMovesPerPod).
  std::int32_t maxMovesPerPod = 2;
  PodListFilter filter;  // namespaces, labelSelector: of the pending pods
};

inline constexpr std::int32_t kMaxMovesPerPod = 4;

Result<Args> decodeArgs(const policy::RawArgs& raw);

}  // namespace kdesched::plugins::makeroomforpendingpods
