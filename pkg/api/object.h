// The kinds of Kubernetes object kdesched keeps, and one value that holds any of them. Headers
// that only name kinds or pass objects around (the store, the reflectors, the cycle gate) include
// this one: it pulls in no JSON or YAML library.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "pkg/api/types.h"

namespace kdesched::api {

enum class Kind { Pod, Node, PodDisruptionBudget, Namespace, PriorityClass, PersistentVolumeClaim, Unknown };
std::string_view toString(Kind k);
// From a "kind" field ("Pod") or a LIST's item kind ("PodList" is not an object kind: Unknown).
Kind kindFromString(std::string_view kind);

using Object = std::variant<Pod, Node, PodDisruptionBudget, Namespace, PriorityClass, PersistentVolumeClaim>;

// Which kept amounts of the object are saturated (kSaturatedMilli: the API server holds more than
// int64 milli-units), for people: "requests memory" (a pod), "allocatable cpu,memory" (a node);
// "" when none is. The decoders saturate such amounts; the reflector and `plan` name them.
std::string saturatedFields(const Pod& pod);
std::string saturatedFields(const Node& node);
std::string saturatedFields(const Object& object);

}  // namespace kdesched::api
