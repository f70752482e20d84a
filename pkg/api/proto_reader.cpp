#include "pkg/api/detail/proto_reader.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <limits>

#include "pkg/api/labels.h"

namespace kdesched::api::detail::proto {
namespace {

using google::protobuf::io::CodedInputStream;

const char* wireTypeName(WireType t) {
  switch (t) {
    case WireType::Varint: return "varint";
    case WireType::Fixed64: return "fixed64";
    case WireType::Len: return "length-delimited";
    case WireType::StartGroup: return "group start";
    case WireType::EndGroup: return "group end";
    case WireType::Fixed32: return "fixed32";
  }
  return "unknown";
}

Status malformed(FieldPath& c, std::string_view what) { return c.fail("malformed protobuf: " + std::string(what)); }

const FieldName* find(const FieldName* names, std::size_t count, std::uint32_t number) {
  for (std::size_t i = 0; i < count; ++i) {
    if (names[i].number == number) return &names[i];
  }
  return nullptr;
}

// Reads one field's value after its tag; false (and `why`) on malformed data.
bool readValue(CodedInputStream& in, std::uint32_t tag, std::size_t size, Field& f, const char*& why) {
  f.number = tag >> 3;
  f.varint = 0;
  f.bytes = {};
  switch (tag & 7) {
    case 0:
      f.type = WireType::Varint;
      if (!in.ReadVarint64(&f.varint)) return why = "truncated varint", false;
      return true;
    case 1:
      f.type = WireType::Fixed64;
      if (!in.ReadLittleEndian64(&f.varint)) return why = "truncated fixed64", false;
      return true;
    case 5: {
      f.type = WireType::Fixed32;
      std::uint32_t v = 0;
      if (!in.ReadLittleEndian32(&v)) return why = "truncated fixed32", false;
      f.varint = v;
      return true;
    }
    case 2: {
      f.type = WireType::Len;
      std::uint32_t len = 0;
      if (!in.ReadVarint32(&len)) return why = "truncated length", false;
      const std::size_t at = static_cast<std::size_t>(in.CurrentPosition());
      if (len > size - at) return why = "a length-delimited field runs past the end of its message", false;
      if (len == 0) return true;
      const void* data = nullptr;
      int avail = 0;
      if (!in.GetDirectBufferPointer(&data, &avail) || static_cast<std::size_t>(avail) < len)
        return why = "a length-delimited field runs past the end of its message", false;
      f.bytes = std::string_view(static_cast<const char*>(data), len);
      in.Skip(static_cast<int>(len));
      return true;
    }
    case 3:
      // Groups are proto2's deprecated nesting, never written by the API server: skipped whole.
      f.type = WireType::StartGroup;
      if (!google::protobuf::internal::WireFormatLite::SkipField(&in, tag)) return why = "malformed group", false;
      return true;
    default: return why = "invalid wire type", false;
  }
}

}  // namespace

Status scanFields(FieldPath& c, std::string_view message, const FieldName* names, std::size_t count,
                  Status (*call)(void* fn, const Field& field), void* fn) {
  if (message.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return malformed(c, "a message over 2 GiB");
  CodedInputStream in(reinterpret_cast<const std::uint8_t*>(message.data()), static_cast<int>(message.size()));
  Field f;
  for (;;) {
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (static_cast<std::size_t>(in.CurrentPosition()) == message.size()) return Status::ok();
      return malformed(c, "invalid field tag");
    }
    if ((tag & 7) == 4) return malformed(c, "a group end without its start");
    const char* why = nullptr;
    if (!readValue(in, tag, message.size(), f, why)) return malformed(c, why);
    if (f.number == 0) return malformed(c, "field number 0");
    const FieldName* name = find(names, count, f.number);
    if (name == nullptr || f.type == WireType::StartGroup) continue;
    if (name->name.empty()) {
      KD_TRY(call(fn, f));
      continue;
    }
    At at(c, name->name);
    KD_TRY(call(fn, f));
  }
}

Status wrongWireType(FieldPath& c, const Field& f, WireType expected) {
  return c.fail("malformed protobuf: field " + std::to_string(f.number) + " has wire type " + wireTypeName(f.type) +
                ", expected " + wireTypeName(expected));
}

Status readMapEntry(FieldPath& c, const Field& f, std::string_view& key, std::string_view& value) {
  static constexpr Fields<2> kEntry{{{1, "key"}, {2, "value"}}};
  key = {};
  value = {};
  return forEachField(c, f, kEntry, [&](const Field& e) -> Status {
    return e.number == 1 ? readBytes(c, e, key) : readBytes(c, e, value);
  });
}

Status addStringPair(FieldPath& c, const Field& f, std::vector<std::pair<std::string, std::string>>& out) {
  std::string_view key, value;
  KD_TRY(readMapEntry(c, f, key, value));
  out.emplace_back(key, value);
  return Status::ok();
}

void sortPairs(std::vector<std::pair<std::string, std::string>>& out) {
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto dup = [](const auto& a, const auto& b) { return a.first == b.first; };
  // unique() keeps the first of a run; reversing first makes it keep the last occurrence.
  std::reverse(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end(), dup), out.end());
  std::reverse(out.begin(), out.end());
}

Status addResource(FieldPath& c, const Field& f, ResourceList& out) {
  static constexpr Fields<1> kQuantity{{{1, ""}}};  // its text; Quantity's own field is no JSON path
  std::string_view name, quantity;
  KD_TRY(readMapEntry(c, f, name, quantity));
  At at(c, name);
  std::string_view text;
  KD_TRY(forEachField(c, quantity, kQuantity, [&](const Field& q) { return readBytes(c, q, text); }));
  auto q = parseQuantityMilliSaturating(text);
  if (!q.isOk()) return c.fail(q.error());
  // As the API server validates requests, limits, overhead, capacity and allocatable.
  if (q->milli < 0)
    return c.fail("must be greater than or equal to 0, got a negative quantity for " + std::string(name));
  out.set(intern(name), q->milli);
  return Status::ok();
}

Status readTime(FieldPath& c, const Field& f, OptionalTime& out) {
  static constexpr Fields<1> kTime{{{1, "seconds"}}};
  if (f.type != WireType::Len) return wrongWireType(c, f, WireType::Len);
  out.reset();
  if (f.bytes.empty()) return Status::ok();
  std::int64_t seconds = 0;
  KD_TRY(forEachField(c, f.bytes, kTime, [&](const Field& s) { return readInt64(c, s, seconds); }));
  out = seconds;
  return Status::ok();
}

Status readRepeatedString(FieldPath& c, const Field& f, std::vector<std::string>& out) {
  At at(c, out.size());
  std::string_view s;
  KD_TRY(readBytes(c, f, s));
  out.emplace_back(s);
  return Status::ok();
}

Status decodeLabelSelector(FieldPath& c, const Field& f, std::optional<LabelSelector>& out) {
  static constexpr Fields<2> kSelector{{{1, "matchLabels"}, {2, "matchExpressions"}}};
  static constexpr Fields<3> kRequirement{{{1, "key"}, {2, "operator"}, {3, "values"}}};
  LabelSelector& sel = out.emplace();
  KD_TRY(forEachField(c, f, kSelector, [&](const Field& x) -> Status {
    if (x.number == 1) return addStringPair(c, x, sel.matchLabels);
    At at(c, sel.matchExpressions.size());
    LabelSelectorRequirement r;
    bool sawOperator = false;
    KD_TRY(forEachField(c, x, kRequirement, [&](const Field& e) -> Status {
      if (e.number == 1) return readString(c, e, r.key);
      if (e.number == 3) return readRepeatedString(c, e, r.values);
      std::string_view op;
      KD_TRY(readBytes(c, e, op));
      auto parsed = parseLabelSelectorOp(op);
      if (!parsed.isOk()) return c.fail(parsed.error());
      r.op = *parsed;
      sawOperator = true;
      return Status::ok();
    }));
    if (!sawOperator) return c.fail("missing operator");
    sel.matchExpressions.push_back(std::move(r));
    return Status::ok();
  }));
  sortPairs(sel.matchLabels);
  return Status::ok();
}

}  // namespace kdesched::api::detail::proto
