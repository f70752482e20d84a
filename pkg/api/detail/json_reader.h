// The JSON reader under the object decoders (pod_decode.cpp, object_decode.cpp): typed reads of
// simdjson on-demand values with the field path kept for errors. Include from pkg/api .cpp files
// only. The small readers are inline because they run for every field of every object: they must
// inline into the decoders as they did when all of this was one file.
//
// Conventions: JSON null means "absent" everywhere, as it does for Go's decoder. Every reader
// returns a Status whose message starts with the field path (`spec.containers[0].name: ...`).
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/detail/field_path.h"
#include "pkg/api/labels.h"
#include "pkg/api/quantity.h"
#include "pkg/api/symbol.h"
#include "pkg/api/types.h"
#include "pkg/base/status.h"

namespace kdesched::api::detail {

namespace od = simdjson::ondemand;

inline std::string_view trimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  const std::size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// The field path (field_path.h), and malformed JSON reported where it was found.
class Ctx : public FieldPath {
 public:
  Status failJson(simdjson::error_code e) const {
    return fail(std::string("malformed JSON: ") + simdjson::error_message(e));
  }
};

inline const char* typeName(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "array";
    case od::json_type::object: return "object";
    case od::json_type::number: return "number";
    case od::json_type::string: return "string";
    case od::json_type::boolean: return "boolean";
    case od::json_type::null: return "null";
  }
  return "unknown";
}

inline Status peek(Ctx& c, od::value& v, od::json_type& t) {
  t = od::json_type::null;  // set on every path: once inlined, GCC cannot tell the error path skips reads of t
  if (auto e = v.type().get(t)) return c.failJson(e);
  return Status::ok();
}

inline Status wrongType(Ctx& c, std::string_view expected, od::json_type got) {
  return c.fail("expected " + std::string(expected) + ", got " + typeName(got));
}

inline Status readOptString(Ctx& c, od::value& v, std::optional<std::string_view>& out) {
  od::json_type t;
  KD_TRY(peek(c, v, t));
  out.reset();
  if (t == od::json_type::null) return Status::ok();
  if (t != od::json_type::string) return wrongType(c, "string", t);
  std::string_view s;
  if (auto e = v.get_string().get(s)) return c.failJson(e);
  out = s;
  return Status::ok();
}

inline Status readString(Ctx& c, od::value& v, std::string_view& out) {
  std::optional<std::string_view> s;
  KD_TRY(readOptString(c, v, s));
  out = s.value_or(std::string_view());
  return Status::ok();
}

inline Status readString(Ctx& c, od::value& v, std::string& out) {
  std::string_view s;
  KD_TRY(readString(c, v, s));
  out.assign(s);
  return Status::ok();
}

inline Status readSymbol(Ctx& c, od::value& v, Symbol& out) {
  std::string_view s;
  KD_TRY(readString(c, v, s));
  out = intern(s);
  return Status::ok();
}

inline Status readBool(Ctx& c, od::value& v, bool& out) {
  od::json_type t;
  KD_TRY(peek(c, v, t));
  if (t == od::json_type::null) {
    out = false;
    return Status::ok();
  }
  if (t != od::json_type::boolean) return wrongType(c, "boolean", t);
  if (auto e = v.get_bool().get(out)) return c.failJson(e);
  return Status::ok();
}

inline Status readOptInt64(Ctx& c, od::value& v, std::optional<std::int64_t>& out) {
  od::json_type t;
  KD_TRY(peek(c, v, t));
  out.reset();
  if (t == od::json_type::null) return Status::ok();
  if (t != od::json_type::number) return wrongType(c, "integer", t);
  std::int64_t x = 0;
  if (v.get_int64().get(x)) return c.fail("expected integer, got " + std::string(trimSpace(v.raw_json_token())));
  out = x;
  return Status::ok();
}

inline Status readOptInt32(Ctx& c, od::value& v, std::optional<std::int32_t>& out) {
  std::optional<std::int64_t> x;
  KD_TRY(readOptInt64(c, v, x));
  out.reset();
  if (!x) return Status::ok();
  if (*x < std::numeric_limits<std::int32_t>::min() || *x > std::numeric_limits<std::int32_t>::max()) {
    return c.fail("integer " + std::to_string(*x) + " out of int32 range");
  }
  out = static_cast<std::int32_t>(*x);
  return Status::ok();
}

template <typename Int>
Status readInt(Ctx& c, od::value& v, Int& out) {
  if constexpr (sizeof(Int) == 4) {
    std::optional<std::int32_t> x;
    KD_TRY(readOptInt32(c, v, x));
    out = x.value_or(0);
  } else {
    std::optional<std::int64_t> x;
    KD_TRY(readOptInt64(c, v, x));
    out = x.value_or(0);
  }
  return Status::ok();
}

inline Status isNull(Ctx& c, od::value& v, bool& null) {
  od::json_type t;
  KD_TRY(peek(c, v, t));
  null = t == od::json_type::null;
  return Status::ok();
}

// Calls f(key, value) for each field of an object value (none for null), with the key on the path.
template <typename F>
Status forEachField(Ctx& c, od::object obj, F&& f) {
  for (auto result : obj) {
    od::field field;
    if (auto e = std::move(result).get(field)) return c.failJson(e);
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return c.failJson(e);
    At at(c, key);
    KD_TRY(f(key, field.value()));
  }
  return Status::ok();
}

template <typename F>
Status forEachField(Ctx& c, od::value& v, F&& f) {
  od::json_type t;
  KD_TRY(peek(c, v, t));
  if (t == od::json_type::null) return Status::ok();
  if (t != od::json_type::object) return wrongType(c, "object", t);
  od::object obj;
  if (auto e = v.get_object().get(obj)) return c.failJson(e);
  return forEachField(c, obj, std::forward<F>(f));
}

// Calls f(element) for each element of an array value (none for null), with [i] on the path.
template <typename F>
Status forEachElement(Ctx& c, od::value& v, F&& f) {
  od::json_type t;
  KD_TRY(peek(c, v, t));
  if (t == od::json_type::null) return Status::ok();
  if (t != od::json_type::array) return wrongType(c, "array", t);
  od::array arr;
  if (auto e = v.get_array().get(arr)) return c.failJson(e);
  std::size_t i = 0;
  for (auto result : arr) {
    od::value element;
    if (auto e = std::move(result).get(element)) return c.failJson(e);
    At at(c, i++);
    KD_TRY(f(element));
  }
  return Status::ok();
}

inline Status readStringArray(Ctx& c, od::value& v, std::vector<std::string>& out) {
  out.clear();
  return forEachElement(c, v, [&](od::value& e) -> Status {
    std::string_view s;
    KD_TRY(readString(c, e, s));
    out.emplace_back(s);
    return Status::ok();
  });
}

// A string that must be one of `names`; anything else is `unknown <what> "<value>"`.
template <typename E, std::size_t N>
Status readEnum(Ctx& c, od::value& v, const std::array<std::pair<std::string_view, E>, N>& names, std::string_view what,
                E& out) {
  std::string_view s;
  KD_TRY(readString(c, v, s));
  for (const auto& [name, value] : names) {
    if (s == name) {
      out = value;
      return Status::ok();
    }
  }
  return c.fail("unknown " + std::string(what) + " \"" + std::string(s) + "\"");
}

// An optional sub-object: unset for null, else emplaced and decoded.
template <typename T, typename F>
Status decodeOptional(Ctx& c, od::value& v, std::optional<T>& out, F&& decode) {
  bool null = false;
  KD_TRY(isNull(c, v, null));
  out.reset();
  if (null) return Status::ok();
  return decode(c, v, out.emplace());
}

// ---------------------------------------------------------------------------------------------
// Readers with more work per call than a field lookup (json_reader.cpp).

// A JSON map of strings as key-sorted pairs; for a repeated key the last one wins, as in Go.
Status readStringPairs(Ctx& c, od::value& v, std::vector<std::pair<std::string, std::string>>& out);
Status readLabels(Ctx& c, od::value& v, Labels& out);
// A quantity is a JSON string or number (resource.Quantity.UnmarshalJSON trims spaces); null is 0.
// An amount beyond int64 milli-units reads as kSaturatedMilli (quantity.h).
Status readQuantity(Ctx& c, od::value& v, std::int64_t& out);
Status readResourceList(Ctx& c, od::value& v, ResourceList& out);
Status readTimestamp(Ctx& c, od::value& v, std::optional<Timestamp>& out);
Status readTimestamp(Ctx& c, od::value& v, OptionalTime& out);
// The status of the condition of type `type` in a conditions array, if there is one.
Status readCondition(Ctx& c, od::value& v, std::string_view type, std::optional<std::string_view>& status);

// ---------------------------------------------------------------------------------------------
// Pieces every kind shares (json_reader.cpp).

Status decodeLabelSelector(Ctx& c, od::value& v, std::optional<LabelSelector>& out);

// The metadata fields a kind keeps; each kind points only at those (the rest are skipped).
struct MetaTargets {
  std::string* name = nullptr;
  Symbol* ns = nullptr;
  Uid* uid = nullptr;
  Labels* labels = nullptr;
  Pod* annotationsOf = nullptr;
  OwnerRefs* owners = nullptr;
  OptionalTime* created = nullptr;
  OptionalTime* deleted = nullptr;
  std::int64_t* generation = nullptr;
};

Status decodeMeta(Ctx& c, od::value& v, const MetaTargets& m);

}  // namespace kdesched::api::detail
