// Decoding Kubernetes objects from API-server JSON (simdjson on-demand, straight into the compact
// model) and from YAML (converted to JSON first). Errors name the object and the field path.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/base/status.h"

#include <simdjson.h>

namespace kdesched::api {

enum class Kind { Pod, Node, PodDisruptionBudget, Namespace, PriorityClass, PersistentVolumeClaim, Unknown };
std::string_view toString(Kind k);
// From a "kind" field ("Pod") or a LIST's item kind ("PodList" is not an object kind: Unknown).
Kind kindFromString(std::string_view kind);

using Object = std::variant<Pod, Node, PodDisruptionBudget, Namespace, PriorityClass, PersistentVolumeClaim>;

// Decode one object of a known kind. `obj` must be positioned at the object's start; fields may
// appear in any order. Errors look like: `spec.containers[0].resources.requests.cpu: invalid
// quantity "12x"` (the caller prefixes the object's identity).
Status decodePod(simdjson::ondemand::object obj, Pod& out);
Status decodeNode(simdjson::ondemand::object obj, Node& out);
Status decodePdb(simdjson::ondemand::object obj, PodDisruptionBudget& out);
Status decodeNamespace(simdjson::ondemand::object obj, Namespace& out);
Status decodePriorityClass(simdjson::ondemand::object obj, PriorityClass& out);
Status decodePvc(simdjson::ondemand::object obj, PersistentVolumeClaim& out);
Status decodeObject(Kind kind, simdjson::ondemand::object obj, Object& out);

// Convenience for one object in a JSON text whose "kind" field names its kind. Unknown kind → error.
Result<Object> decodeObjectJson(std::string_view json);

// Converts YAML text (one document) to JSON text, preserving types as the API server would read
// them (quoted strings stay strings; unquoted true/false/null/numbers become JSON scalars).
// Duplicate mapping keys are an error naming the key and line.
Result<std::string> yamlDocumentToJson(std::string_view yaml);

// Splits a YAML stream ("---"-separated documents) and converts each non-empty document to JSON.
Result<std::vector<std::string>> yamlStreamToJson(std::string_view yaml);

// Parses an RFC 3339 timestamp ("2024-01-02T03:04:05Z", with optional fraction/offset).
Result<Timestamp> parseTimestamp(std::string_view text);

}  // namespace kdesched::api
