// What both pod decoders (pod_decode.cpp from JSON, pod_proto.cpp from protobuf) share, and the
// node decoders (object_decode.cpp, node_proto.cpp) the taint effects: the vocabularies of the
// spec's enum fields, what a decoder gathers before the derived fields can be
// computed, and that computation. One copy, so the two wires cannot drift apart. Include from
// pkg/api .cpp files only.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/types.h"

namespace kdesched::api::detail {

inline constexpr std::array<std::pair<std::string_view, NodeSelectorOp>, 6> kNodeSelectorOps{{
    {"In", NodeSelectorOp::In},
    {"NotIn", NodeSelectorOp::NotIn},
    {"Exists", NodeSelectorOp::Exists},
    {"DoesNotExist", NodeSelectorOp::DoesNotExist},
    {"Gt", NodeSelectorOp::Gt},
    {"Lt", NodeSelectorOp::Lt},
}};

// An empty operator is Equal (core/v1 Toleration).
inline constexpr std::array<std::pair<std::string_view, TolerationOp>, 5> kTolerationOps{{
    {"", TolerationOp::Equal},
    {"Equal", TolerationOp::Equal},
    {"Exists", TolerationOp::Exists},
    {"Gt", TolerationOp::Gt},
    {"Lt", TolerationOp::Lt},
}};

// An operator not in kTolerationOps is Unknown, not an error: the API server accepted it, and
// refusing it would refuse the pod, and in the daemon the whole LIST page with it.
inline TolerationOp tolerationOp(std::string_view s) {
  for (const auto& [name, op] : kTolerationOps) {
    if (s == name) return op;
  }
  return TolerationOp::Unknown;
}

// A toleration's empty effect tolerates every effect.
inline constexpr std::array<std::pair<std::string_view, TaintEffect>, 4> kTolerationEffects{{
    {"", TaintEffect::None},
    {"NoSchedule", TaintEffect::NoSchedule},
    {"PreferNoSchedule", TaintEffect::PreferNoSchedule},
    {"NoExecute", TaintEffect::NoExecute},
}};

// A node's taint has one of these (a toleration's may also be empty: kTolerationEffects).
inline constexpr std::array<std::pair<std::string_view, TaintEffect>, 3> kTaintEffects{{
    {"NoSchedule", TaintEffect::NoSchedule},
    {"PreferNoSchedule", TaintEffect::PreferNoSchedule},
    {"NoExecute", TaintEffect::NoExecute},
}};

inline constexpr std::array<std::pair<std::string_view, UnsatisfiableAction>, 2> kUnsatisfiableActions{{
    {"DoNotSchedule", UnsatisfiableAction::DoNotSchedule},
    {"ScheduleAnyway", UnsatisfiableAction::ScheduleAnyway},
}};

inline constexpr std::array<std::pair<std::string_view, InclusionPolicy>, 2> kInclusionPolicies{{
    {"Honor", InclusionPolicy::Honor},
    {"Ignore", InclusionPolicy::Ignore},
}};

// An absent or empty phase is Pending (the zero value); an unrecognised one is Unknown, so a newer
// API server cannot make whole lists undecodable.
PodPhase podPhase(std::string_view phase);
// The QoS class status.qosClass names, if it names one.
std::optional<QosClass> qosClass(std::string_view qos);

// A container status that reports resources (in-place resize): the scheduler counts a resized
// container by these as well as by its spec. Matched to its container by name, which the API server
// keeps unique across a pod's containers and init containers.
struct ContainerResizeStatus {
  std::string_view name;
  ResourceList actuated;   // resources.requests
  ResourceList allocated;  // allocatedResources
};

// What a pod decoder gathers before it can compute the derived fields. The views point into the
// decoded document.
struct PodParts {
  std::vector<ContainerResources> containers;
  std::vector<ContainerResources> initContainers;
  std::vector<std::string_view> containerNames;  // parallel to containers
  std::vector<std::string_view> initContainerNames;
  std::vector<ContainerResizeStatus> containerResize;  // from containerStatuses
  std::vector<ContainerResizeStatus> initContainerResize;
  ResourceList overhead;
  // spec.resources (pod-level resources), when the pod has the field: its requests override the
  // containers' sum for cpu, memory and hugepages-*, and it alone decides the QoS class.
  std::optional<ContainerResources> podLevel;
  // Volumes that name a PVC, in volume order: the claim name, or for an ephemeral volume its
  // volume name (the PVC is "<pod>-<volume>", and the pod name may come later in the document).
  std::vector<std::pair<bool, std::string_view>> claims;
  SchedulingConstraints constraints;
  ImageList images;  // of the regular containers, in order
  PodStatusDetail status;
  bool qosFromStatus = false;
};

// SetDefaults_Pod: a limit without a request makes the request equal to the limit (per resource).
// API-server objects already carry it; manifests read from files may not.
void defaultRequestsFromLimits(ContainerResources& c);

// A pod as a decoder starts it: no scheduling constraints (the shared empty block).
void resetPod(Pod& pod);
// The derived fields, once the whole object has been read: PVC names, requests as the scheduler
// computes them (in-place resize included), QoS, and the shared blocks.
void finishPod(Pod& pod, PodParts& parts);

}  // namespace kdesched::api::detail
