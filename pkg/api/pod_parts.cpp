#include "pkg/api/detail/pod_parts.h"

#include <algorithm>
#include <string>

#include "pkg/api/scheduling.h"

namespace kdesched::api::detail {
namespace {

constexpr std::array<std::pair<std::string_view, PodPhase>, 5> kPodPhases{{
    {"Pending", PodPhase::Pending},
    {"Running", PodPhase::Running},
    {"Succeeded", PodPhase::Succeeded},
    {"Failed", PodPhase::Failed},
    {"Unknown", PodPhase::Unknown},
}};

constexpr std::array<std::pair<std::string_view, QosClass>, 3> kQosClasses{{
    {"BestEffort", QosClass::BestEffort},
    {"Burstable", QosClass::Burstable},
    {"Guaranteed", QosClass::Guaranteed},
}};

// In-place resize, as kube-scheduler counts it (InPlacePodVerticalScaling, GA since 1.35): a
// regular container or a sidecar whose status reports resources counts by its effective requests
// (effectiveResizeRequests); a non-restartable init container always counts by its spec.
void applyResizeStatus(PodParts& parts) {
  if (parts.containerResize.empty() && parts.initContainerResize.empty()) return;
  const bool infeasible = podResizeInfeasible(parts.status.conditions);
  auto find = [&](std::string_view name) -> const ContainerResizeStatus* {
    for (const auto* list : {&parts.containerResize, &parts.initContainerResize}) {
      for (const auto& s : *list) {
        if (s.name == name) return &s;
      }
    }
    return nullptr;
  };
  auto apply = [&](std::vector<ContainerResources>& list, const std::vector<std::string_view>& names) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (&list == &parts.initContainers && !list[i].restartableInit) continue;
      if (const auto* s = find(names[i])) {
        list[i].requests = effectiveResizeRequests(list[i].requests, s->actuated, s->allocated, infeasible);
      }
    }
  };
  apply(parts.containers, parts.containerNames);
  apply(parts.initContainers, parts.initContainerNames);
}

const std::shared_ptr<const SchedulingConstraints>& noConstraints() {
  static const auto* none = new std::shared_ptr<const SchedulingConstraints>(internConstraints({}));
  return *none;
}

}  // namespace

PodPhase podPhase(std::string_view phase) {
  if (phase.empty()) return PodPhase::Pending;
  for (const auto& [name, value] : kPodPhases) {
    if (phase == name) return value;
  }
  return PodPhase::Unknown;
}

std::optional<QosClass> qosClass(std::string_view qos) {
  for (const auto& [name, value] : kQosClasses) {
    if (qos == name) return value;
  }
  return std::nullopt;
}

void defaultRequestsFromLimits(ContainerResources& c) {
  for (const auto& [name, milli] : c.limits) {
    if (!c.requests.has(name)) c.requests.set(name, milli);
  }
}

void resetPod(Pod& pod) {
  pod = Pod{};
  pod.scheduling = noConstraints();
}

void finishPod(Pod& out, PodParts& parts) {
  out.pvcClaimNames.reserve(parts.claims.size());
  for (const auto& [ephemeral, name] : parts.claims) {
    out.pvcClaimNames.push_back(ephemeral ? out.name + "-" + std::string(name) : std::string(name));
  }
  if (parts.podLevel) defaultPodLevelRequests(*parts.podLevel, parts.containers, parts.initContainers);
  applyResizeStatus(parts);
  out.requests = computePodRequests(parts.containers, parts.initContainers, parts.overhead,
                                    parts.podLevel ? &parts.podLevel->requests : nullptr);
  if (!parts.qosFromStatus)
    out.qos = parts.podLevel ? computePodLevelQos(*parts.podLevel) : computeQos(parts.containers, parts.initContainers);
  out.scheduling = internConstraints(std::move(parts.constraints));
  if (!parts.images.empty()) out.images = internImages(std::move(parts.images));
  if (!parts.status.empty()) {
    // Kinds in API order whatever order the status lists came in, so equal statuses compare equal.
    std::stable_sort(parts.status.containers.begin(), parts.status.containers.end(),
                     [](const ContainerStatus& a, const ContainerStatus& b) { return a.kind < b.kind; });
    out.statusDetail = std::make_shared<const PodStatusDetail>(std::move(parts.status));
  }
}

}  // namespace kdesched::api::detail
