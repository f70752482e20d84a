#include "pkg/api/workload.h"

namespace kdesched::api {

Workload workloadOf(const Pod& pod) {
  const OwnerReference* c = pod.controllerRef();
  if (!c) return {};
  const std::string_view kind = c->kind.view(), name = c->name.view();
  // The Deployment controller names its ReplicaSets <deployment>-<hash> and labels their pods
  // pod-template-hash=<hash>; a ReplicaSet named otherwise (made by hand, or by another
  // controller) stays itself.
  if (kind == "ReplicaSet" && c->apiVersion.view().starts_with("apps/")) {
    const std::optional<std::string_view> hash = pod.labels.get("pod-template-hash");
    if (hash && !hash->empty() && name.size() > hash->size() + 1 && name.ends_with(*hash) &&
        name[name.size() - hash->size() - 1] == '-')
      return {"Deployment", std::string(name.substr(0, name.size() - hash->size() - 1))};
  }
  return {std::string(kind), std::string(name)};
}

}  // namespace kdesched::api
