// The resources kdesched keeps in its cache, each with the cluster-wide collection path that one
// LIST+WATCH covers (never one request per node or namespace: that is what hammered API servers
// in kubernetes-sigs/descheduler#671).
#pragma once

#include <string_view>

#include "pkg/api/decode.h"

namespace kdesched::kube {

struct Resource {
  api::Kind kind;
  std::string_view name;  // the plural resource name, for logs and metrics
  std::string_view path;  // the cluster-wide collection: LIST and WATCH go here
};

inline constexpr Resource kPods{api::Kind::Pod, "pods", "/api/v1/pods"};
inline constexpr Resource kNodes{api::Kind::Node, "nodes", "/api/v1/nodes"};
inline constexpr Resource kNamespaces{api::Kind::Namespace, "namespaces", "/api/v1/namespaces"};
inline constexpr Resource kPodDisruptionBudgets{api::Kind::PodDisruptionBudget, "poddisruptionbudgets",
                                                "/apis/policy/v1/poddisruptionbudgets"};
inline constexpr Resource kPersistentVolumeClaims{api::Kind::PersistentVolumeClaim, "persistentvolumeclaims",
                                                  "/api/v1/persistentvolumeclaims"};

// Every resource the live modes cache, in the order they start.
inline constexpr Resource kCachedResources[] = {kPods, kNodes, kNamespaces, kPodDisruptionBudgets,
                                                kPersistentVolumeClaims};

// The plural resource name of a cached kind ("pods"); the kind's own name for any other.
inline std::string_view resourceName(api::Kind kind) {
  for (const Resource& r : kCachedResources)
    if (r.kind == kind) return r.name;
  return api::toString(kind);
}

}  // namespace kdesched::kube
