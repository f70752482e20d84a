// The API server's protobuf wire (application/vnd.kubernetes.protobuf), decoded into what the JSON
// wire gives (wire.h): LIST pages, WATCH events, Status errors. Every body is the 4-byte magic
// "k8s\0" and a runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding
// = 3, contentType = 4} whose raw is the object's own message (apimachinery's protobuf serializer).
// A WATCH stream (";stream=watch") is frames of a 4-byte big-endian length and a bare
// metav1.WatchEvent {type = 1, object = 2}, no magic, no Unknown (the stream serializer is
// apimachinery's RawSerializer); the event's object is a RawExtension {raw = 1} holding the
// object's body, magic and Unknown (the embedded encoder is the plain protobuf serializer).
// Checked against kube-apiserver 1.36 (test/e2e/wire.sh). Only the kinds api::decodesProto() holds
// are asked for in protobuf.
#pragma once

#include <cstdint>
#include <string_view>

#include "pkg/kube/api_error.h"
#include "pkg/kube/wire.h"

namespace kdesched::kube {

inline constexpr std::string_view kProtobufMediaType = "application/vnd.kubernetes.protobuf";
inline constexpr std::string_view kJsonMediaType = "application/json";
// What a request for a protobuf-decodable kind accepts, as client-go's typed clients ask for
// built-in types: protobuf, or JSON where the server has no protobuf for it.
inline constexpr std::string_view kAcceptProtobuf = "application/vnd.kubernetes.protobuf, application/json";

// Whether a Content-Type header names the protobuf media type (whatever its parameters).
bool isProtobufContentType(std::string_view contentType);
// Whether a body starts with the protobuf magic "k8s\0".
bool hasProtobufMagic(std::string_view body);

// The largest watch frame accepted: a length beyond it is a corrupt stream, not an object.
inline constexpr std::uint32_t kMaxWatchFrame = 64 * 1024 * 1024;

// A LIST page (a PodList): its items into out.objects (or out.undecodable), metadata.resourceVersion
// and metadata.continue. Errors are for a body that is not a list of `kind` or not protobuf.
Status decodeListPageProto(api::Kind kind, std::string_view body, ListPage& out);

// One watch frame, without its 4-byte length: a bare WatchEvent message.
Status decodeWatchEventProto(api::Kind kind, std::string_view frame, WatchEvent& out);

// A metav1.Status body (magic and Unknown) into `e`; false when `body` is not one.
bool decodeStatusProto(std::string_view body, ApiError& e);

}  // namespace kdesched::kube
