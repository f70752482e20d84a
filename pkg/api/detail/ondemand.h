// The decoders' simdjson-typed entry points. Include from .cpp files only (pkg/api, the LIST/WATCH
// decoding in pkg/kube, the snapshot loader in pkg/cluster): a header including this one would
// pull <simdjson.h> into everything above it.
#pragma once

#include <simdjson.h>

#include "pkg/api/decode.h"

namespace kdesched::api {

struct JsonParser::Impl {
  simdjson::ondemand::parser parser;
};

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

}  // namespace kdesched::api
