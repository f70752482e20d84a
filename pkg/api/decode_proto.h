// Decoding Kubernetes objects from the API server's protobuf (application/vnd.kubernetes.protobuf)
// into the same compact model the JSON decoders fill, reading the same fields with the same checks
// and error texts. The input is an object's own message (the raw bytes of the runtime.Unknown the
// API server wraps it in; pkg/kube/wire_proto.h unwraps that). No libprotobuf type in this header.
#pragma once

#include <string_view>

#include "pkg/api/object.h"
#include "pkg/base/status.h"

namespace kdesched::api {

// The kinds decodeObjectProto reads: the high-volume ones (pods, and nodes, whose status can be
// large). Every other kind is read as JSON.
bool decodesProto(Kind kind);

// One object of a kind decodesProto() holds. Errors look like the JSON decoder's:
// `spec.containers[0].resources.requests.cpu: invalid quantity "12x"`, and malformed wire data
// `spec.containers[0]: malformed protobuf: truncated varint`.
Status decodeObjectProto(Kind kind, std::string_view message, Object& out);

Status decodePodProto(std::string_view message, Pod& out);
Status decodeNodeProto(std::string_view message, Node& out);

}  // namespace kdesched::api
