#include "pkg/api/object.h"

namespace kdesched::api {

std::string_view toString(Kind k) {
  switch (k) {
    case Kind::Pod: return "Pod";
    case Kind::Node: return "Node";
    case Kind::PodDisruptionBudget: return "PodDisruptionBudget";
    case Kind::Namespace: return "Namespace";
    case Kind::PriorityClass: return "PriorityClass";
    case Kind::PersistentVolumeClaim: return "PersistentVolumeClaim";
    case Kind::Unknown: return "Unknown";
  }
  return "Unknown";
}

Kind kindFromString(std::string_view kind) {
  for (Kind k : {Kind::Pod, Kind::Node, Kind::PodDisruptionBudget, Kind::Namespace, Kind::PriorityClass,
                 Kind::PersistentVolumeClaim}) {
    if (toString(k) == kind) return k;
  }
  return Kind::Unknown;
}

}  // namespace kdesched::api
