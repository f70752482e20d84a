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

std::string saturatedFields(const Pod& pod) {
  const std::string names = pod.requests.list().saturatedNames();
  return names.empty() ? names : "requests " + names;
}

std::string saturatedFields(const Node& node) {
  const std::string names = node.allocatable.saturatedNames();
  return names.empty() ? names : "allocatable " + names;
}

std::string saturatedFields(const Object& object) {
  if (const auto* pod = std::get_if<Pod>(&object)) return saturatedFields(*pod);
  if (const auto* node = std::get_if<Node>(&object)) return saturatedFields(*node);
  return {};
}

}  // namespace kdesched::api
