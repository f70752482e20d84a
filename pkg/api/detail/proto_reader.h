// The protobuf reader under the pod decoder (pod_proto.cpp) and the envelope, LIST and WATCH
// decoding in pkg/kube (wire_proto.cpp): fields read by number with libprotobuf's
// CodedInputStream, from the field numbers of k8s.io/api's and apimachinery's generated.proto (no
// generated code: only the fields kdesched reads are ever looked at, the rest skipped by wire type).
//
// A message is a byte view into the document; a nested message is decoded from its own view, so
// strings are views too (nothing is copied until a decoder keeps it). Errors carry the field path
// in JSON's names, as the JSON reader's do. Proto2 semantics: a field absent is the zero value, a
// repeated field arrives one element per occurrence, a map as repeated {key = 1, value = 2}
// entries, and a field repeated where one was expected keeps the last value.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "pkg/api/detail/field_path.h"
#include "pkg/api/labels.h"
#include "pkg/api/quantity.h"
#include "pkg/api/symbol.h"
#include "pkg/api/types.h"
#include "pkg/base/status.h"

namespace kdesched::api::detail::proto {

enum class WireType : std::uint8_t { Varint = 0, Fixed64 = 1, Len = 2, StartGroup = 3, EndGroup = 4, Fixed32 = 5 };

// One field as read from the wire: a varint's value, or a length-delimited field's bytes.
struct Field {
  std::uint32_t number = 0;
  WireType type = WireType::Varint;
  std::uint64_t varint = 0;  // Varint, Fixed64, Fixed32
  std::string_view bytes;    // Len: a string, bytes or a nested message
};

// A message's field numbers that a decoder reads, with their JSON names (the path in errors).
struct FieldName {
  std::uint32_t number;
  std::string_view name;
};
template <std::size_t N>
using Fields = std::array<FieldName, N>;

// Reads the fields of `message` in wire order and calls f(field) for each whose number `names`
// holds, with its JSON name on the path; the others are skipped. Malformed wire data (a truncated
// varint or length, a length past the end, an invalid wire type) is an error at the message's path.
// (`call(fn, field)` calls the caller's lambda: a function reference that never allocates, as a
// std::function holding a lambda of several captures would, once per message.)
Status scanFields(FieldPath& c, std::string_view message, const FieldName* names, std::size_t count,
                  Status (*call)(void* fn, const Field& field), void* fn);

template <std::size_t N, typename F>
Status forEachField(FieldPath& c, std::string_view message, const Fields<N>& names, F&& f) {
  using Fn = std::remove_reference_t<F>;
  return scanFields(
      c, message, names.data(), N, [](void* fn, const Field& field) { return (*static_cast<Fn*>(fn))(field); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

Status wrongWireType(FieldPath& c, const Field& f, WireType expected);

// The fields of a nested message field.
template <std::size_t N, typename F>
Status forEachField(FieldPath& c, const Field& message, const Fields<N>& names, F&& f) {
  if (message.type != WireType::Len) return wrongWireType(c, message, WireType::Len);
  return forEachField(c, message.bytes, names, std::forward<F>(f));
}

inline Status readBytes(FieldPath& c, const Field& f, std::string_view& out) {
  if (f.type != WireType::Len) return wrongWireType(c, f, WireType::Len);
  out = f.bytes;
  return Status::ok();
}

inline Status readString(FieldPath& c, const Field& f, std::string& out) {
  std::string_view s;
  KD_TRY(readBytes(c, f, s));
  out.assign(s);
  return Status::ok();
}

inline Status readSymbol(FieldPath& c, const Field& f, Symbol& out) {
  std::string_view s;
  KD_TRY(readBytes(c, f, s));
  out = intern(s);
  return Status::ok();
}

inline Status readBool(FieldPath& c, const Field& f, bool& out) {
  if (f.type != WireType::Varint) return wrongWireType(c, f, WireType::Varint);
  out = f.varint != 0;
  return Status::ok();
}

// int64 and int32 are varints; a negative int32 is sign-extended to ten bytes, and Go's decoder
// keeps the low 32 bits, as this does.
inline Status readInt64(FieldPath& c, const Field& f, std::int64_t& out) {
  if (f.type != WireType::Varint) return wrongWireType(c, f, WireType::Varint);
  out = static_cast<std::int64_t>(f.varint);
  return Status::ok();
}

inline Status readInt32(FieldPath& c, const Field& f, std::int32_t& out) {
  if (f.type != WireType::Varint) return wrongWireType(c, f, WireType::Varint);
  out = static_cast<std::int32_t>(static_cast<std::uint32_t>(f.varint));
  return Status::ok();
}

template <typename Int>
Status readOptInt(FieldPath& c, const Field& f, std::optional<Int>& out) {
  Int x = 0;
  if constexpr (sizeof(Int) == 4) {
    KD_TRY(readInt32(c, f, x));
  } else {
    KD_TRY(readInt64(c, f, x));
  }
  out = x;
  return Status::ok();
}

// A string that must be one of `names`; anything else is `unknown <what> "<value>"` (as the JSON
// reader says it).
template <typename E, std::size_t N>
Status readEnum(FieldPath& c, const Field& f, const std::array<std::pair<std::string_view, E>, N>& names,
                std::string_view what, E& out) {
  std::string_view s;
  KD_TRY(readBytes(c, f, s));
  for (const auto& [name, value] : names) {
    if (s == name) {
      out = value;
      return Status::ok();
    }
  }
  return c.fail("unknown " + std::string(what) + " \"" + std::string(s) + "\"");
}

// One entry of a map<string, ...> field: its key, and its value's bytes (a string, or a message).
Status readMapEntry(FieldPath& c, const Field& f, std::string_view& key, std::string_view& value);

// map<string, string> as key-sorted pairs (what the JSON reader keeps; the last of a repeated key).
Status addStringPair(FieldPath& c, const Field& f, std::vector<std::pair<std::string, std::string>>& out);
void sortPairs(std::vector<std::pair<std::string, std::string>>& out);

// map<string, resource.Quantity> (a ResourceList: requests, limits, overhead, allocatable); the
// value's text is checked as the JSON reader checks it (parseQuantity, not negative), with the
// entry's key on the path.
Status addResource(FieldPath& c, const Field& f, ResourceList& out);

// metav1.Time {seconds = 1, nanos = 2}: the API server writes a zero time as an empty message,
// which is unset (JSON's null); the fraction is dropped, as JSON's second precision does.
Status readTime(FieldPath& c, const Field& f, OptionalTime& out);

Status decodeLabelSelector(FieldPath& c, const Field& f, std::optional<LabelSelector>& out);
Status readRepeatedString(FieldPath& c, const Field& f, std::vector<std::string>& out);

}  // namespace kdesched::api::detail::proto
