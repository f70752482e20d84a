// The resources kdesched keeps in its cache, each with the cluster-wide collection path that one
// LIST+WATCH covers (never one request per node or namespace: that is what hammered API servers
// in descheduler#671).
#pragma once

#include <array>
#include <string_view>

#include "pkg/api/decode.h"

namespace kdesched::kube {

struct Resource {
  api::Kind kind;
  std::string_view name;  // the plural resource name, for logs and metrics
  std::string_view path;  // the cluster-wide collection: LIST and WATCH go here
  bool namespaced;
};

inline constexpr Resource kPods{api::Kind::Pod, "pods", "/api/v1/pods", true};
inline constexpr Resource kNodes{api::Kind::Node, "nodes", "/api/v1/nodes", false};
inline constexpr Resource kNamespaces{api::Kind::Namespace, "namespaces", "/api/v1/namespaces", false};
inline constexpr Resource kPodDisruptionBudgets{api::Kind::PodDisruptionBudget, "poddisruptionbudgets",
                                                "/apis/policy/v1/poddisruptionbudgets", true};
inline constexpr Resource kPriorityClasses{api::Kind::PriorityClass, "priorityclasses",
                                           "/apis/scheduling.k8s.io/v1/priorityclasses", false};
inline constexpr Resource kPersistentVolumeClaims{api::Kind::PersistentVolumeClaim, "persistentvolumeclaims",
                                                  "/api/v1/persistentvolumeclaims", true};

inline constexpr std::array<Resource, 6> kWatchedResources{
    kPods, kNodes, kNamespaces, kPodDisruptionBudgets, kPriorityClasses, kPersistentVolumeClaims};

}  // namespace kdesched::kube
