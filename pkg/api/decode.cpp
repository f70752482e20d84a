#include "pkg/api/decode.h"

#include "pkg/api/yaml_scan.h"

#include <simdjson.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <unordered_set>

#include "pkg/api/scheduling.h"

namespace kdesched::api {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

// ---------------------------------------------------------------------------------------------
// Interning: label keys/values, namespaces and node names repeat across every object, so a small
// per-thread cache in front of the global (locked) symbol table makes the common case lock-free.
Symbol intern(std::string_view s) {
  if (s.empty()) return Symbol();
  constexpr std::size_t kSlots = 4096;
  thread_local std::array<Symbol, kSlots> cache;  // an empty slot holds "" and never matches
  Symbol& slot = cache[std::hash<std::string_view>()(s) & (kSlots - 1)];
  if (slot.view() != s) slot = Symbol(s);
  return slot;
}

std::string_view trimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  const std::size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// ---------------------------------------------------------------------------------------------
// Field paths. Decoders push the key or index they descend into; the path text is only built when
// an error is reported, so the happy path allocates nothing for it.
class Ctx {
  struct Segment {
    std::string_view key;
    std::int64_t index;
  };

 public:
  void push(std::string_view key) { pushSegment(Segment{key, -1}); }
  void push(std::size_t index) { pushSegment(Segment{{}, static_cast<std::int64_t>(index)}); }
  void pop() { --depth_; }

  Status fail(std::string_view what) const {
    std::string msg = path();
    if (!msg.empty()) msg += ": ";
    msg += what;
    return Status::error(std::move(msg));
  }
  Status failJson(error_code e) const { return fail(std::string("malformed JSON: ") + simdjson::error_message(e)); }

 private:
  // A fixed array rather than a vector: pushing happens for every field decoded. Paths deeper
  // than the array (no real object nests that far in the fields we read) are shown truncated.
  static constexpr std::size_t kMaxDepth = 48;

  void pushSegment(Segment s) {
    if (depth_ < kMaxDepth) path_[depth_] = s;
    ++depth_;
  }

  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < std::min(depth_, kMaxDepth); ++i) {
      const Segment& seg = path_[i];
      if (seg.index >= 0) {
        out += '[';
        out += std::to_string(seg.index);
        out += ']';
      } else {
        if (!out.empty()) out += '.';
        out += seg.key;
      }
    }
    if (depth_ > kMaxDepth) out += "...";
    return out;
  }

  std::array<Segment, kMaxDepth> path_;
  std::size_t depth_ = 0;
};

class At {
 public:
  At(Ctx& c, std::string_view key) : c_(c) { c_.push(key); }
  At(Ctx& c, std::size_t index) : c_(c) { c_.push(index); }
  ~At() { c_.pop(); }
  At(const At&) = delete;
  At& operator=(const At&) = delete;

 private:
  Ctx& c_;
};

// ---------------------------------------------------------------------------------------------
// Typed readers. JSON null means "absent" everywhere, as it does for Go's decoder.

const char* typeName(od::json_type t) {
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

Status peek(Ctx& c, od::value& v, od::json_type& t) {
  if (auto e = v.type().get(t)) return c.failJson(e);
  return Status::ok();
}

Status wrongType(Ctx& c, std::string_view expected, od::json_type got) {
  return c.fail("expected " + std::string(expected) + ", got " + typeName(got));
}

Status readOptString(Ctx& c, od::value& v, std::optional<std::string_view>& out) {
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

Status readString(Ctx& c, od::value& v, std::string_view& out) {
  std::optional<std::string_view> s;
  KD_TRY(readOptString(c, v, s));
  out = s.value_or(std::string_view());
  return Status::ok();
}

Status readString(Ctx& c, od::value& v, std::string& out) {
  std::string_view s;
  KD_TRY(readString(c, v, s));
  out.assign(s);
  return Status::ok();
}

Status readSymbol(Ctx& c, od::value& v, Symbol& out) {
  std::string_view s;
  KD_TRY(readString(c, v, s));
  out = intern(s);
  return Status::ok();
}

Status readBool(Ctx& c, od::value& v, bool& out) {
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

Status readOptInt64(Ctx& c, od::value& v, std::optional<std::int64_t>& out) {
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

Status readOptInt32(Ctx& c, od::value& v, std::optional<std::int32_t>& out) {
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

Status isNull(Ctx& c, od::value& v, bool& null) {
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

Status readStringArray(Ctx& c, od::value& v, std::vector<std::string>& out) {
  out.clear();
  return forEachElement(c, v, [&](od::value& e) -> Status {
    std::string_view s;
    KD_TRY(readString(c, e, s));
    out.emplace_back(s);
    return Status::ok();
  });
}

// A JSON map of strings as key-sorted pairs; for a repeated key the last one wins, as in Go.
Status readStringPairs(Ctx& c, od::value& v, std::vector<std::pair<std::string, std::string>>& out) {
  out.clear();
  KD_TRY(forEachField(c, v, [&](std::string_view key, od::value& val) -> Status {
    std::string_view s;
    KD_TRY(readString(c, val, s));
    out.emplace_back(key, s);
    return Status::ok();
  }));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto dup = [](const auto& a, const auto& b) { return a.first == b.first; };
  // unique() keeps the first of a run; reversing first makes it keep the last occurrence.
  std::reverse(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end(), dup), out.end());
  std::reverse(out.begin(), out.end());
  return Status::ok();
}

Status readLabels(Ctx& c, od::value& v, Labels& out) {
  std::vector<Labels::Item> items;
  items.reserve(16);
  KD_TRY(forEachField(c, v, [&](std::string_view key, od::value& val) -> Status {
    std::string_view s;
    KD_TRY(readString(c, val, s));
    items.emplace_back(intern(key), intern(s));
    return Status::ok();
  }));
  out = Labels::fromUnsorted(std::move(items));
  return Status::ok();
}

// A quantity is a JSON string or number (resource.Quantity.UnmarshalJSON trims spaces); null is 0.
Status readQuantity(Ctx& c, od::value& v, std::int64_t& out) {
  od::json_type t;
  KD_TRY(peek(c, v, t));
  std::string_view text;
  switch (t) {
    case od::json_type::null: out = 0; return Status::ok();
    case od::json_type::string:
      if (auto e = v.get_string().get(text)) return c.failJson(e);
      break;
    case od::json_type::number: text = v.raw_json_token(); break;
    default: return wrongType(c, "quantity", t);
  }
  auto q = parseQuantityMilli(trimSpace(text));
  if (!q.isOk()) return c.fail(q.error());
  out = *q;
  return Status::ok();
}

Status readResourceList(Ctx& c, od::value& v, ResourceList& out) {
  return forEachField(c, v, [&](std::string_view name, od::value& val) -> Status {
    std::int64_t milli = 0;
    KD_TRY(readQuantity(c, val, milli));
    out.set(intern(name), milli);
    return Status::ok();
  });
}

Status readTimestamp(Ctx& c, od::value& v, std::optional<Timestamp>& out) {
  std::optional<std::string_view> s;
  KD_TRY(readOptString(c, v, s));
  out.reset();
  if (!s) return Status::ok();
  auto ts = parseTimestamp(*s);
  if (!ts.isOk()) return c.fail(ts.error());
  out = *ts;
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Enumerations.

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

constexpr std::array<std::pair<std::string_view, NodeSelectorOp>, 6> kNodeSelectorOps{{
    {"In", NodeSelectorOp::In},
    {"NotIn", NodeSelectorOp::NotIn},
    {"Exists", NodeSelectorOp::Exists},
    {"DoesNotExist", NodeSelectorOp::DoesNotExist},
    {"Gt", NodeSelectorOp::Gt},
    {"Lt", NodeSelectorOp::Lt},
}};

// An empty operator is Equal (core/v1 Toleration).
constexpr std::array<std::pair<std::string_view, TolerationOp>, 3> kTolerationOps{{
    {"", TolerationOp::Equal},
    {"Equal", TolerationOp::Equal},
    {"Exists", TolerationOp::Exists},
}};

constexpr std::array<std::pair<std::string_view, TaintEffect>, 3> kTaintEffects{{
    {"NoSchedule", TaintEffect::NoSchedule},
    {"PreferNoSchedule", TaintEffect::PreferNoSchedule},
    {"NoExecute", TaintEffect::NoExecute},
}};

// A toleration's empty effect tolerates every effect.
constexpr std::array<std::pair<std::string_view, TaintEffect>, 4> kTolerationEffects{{
    {"", TaintEffect::None},
    {"NoSchedule", TaintEffect::NoSchedule},
    {"PreferNoSchedule", TaintEffect::PreferNoSchedule},
    {"NoExecute", TaintEffect::NoExecute},
}};

constexpr std::array<std::pair<std::string_view, UnsatisfiableAction>, 2> kUnsatisfiableActions{{
    {"DoNotSchedule", UnsatisfiableAction::DoNotSchedule},
    {"ScheduleAnyway", UnsatisfiableAction::ScheduleAnyway},
}};

constexpr std::array<std::pair<std::string_view, InclusionPolicy>, 2> kInclusionPolicies{{
    {"Honor", InclusionPolicy::Honor},
    {"Ignore", InclusionPolicy::Ignore},
}};

// ---------------------------------------------------------------------------------------------
// Selectors and affinity.

Status decodeLabelSelector(Ctx& c, od::value& v, std::optional<LabelSelector>& out) {
  bool null = false;
  KD_TRY(isNull(c, v, null));
  out.reset();
  if (null) return Status::ok();
  LabelSelector& sel = out.emplace();
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "matchLabels") return readStringPairs(c, f, sel.matchLabels);
    if (key == "matchExpressions") {
      return forEachElement(c, f, [&](od::value& e) -> Status {
        LabelSelectorRequirement r;
        bool sawOperator = false;
        KD_TRY(forEachField(c, e, [&](std::string_view k, od::value& x) -> Status {
          if (k == "key") return readString(c, x, r.key);
          if (k == "values") return readStringArray(c, x, r.values);
          if (k == "operator") {
            std::string_view op;
            KD_TRY(readString(c, x, op));
            auto parsed = parseLabelSelectorOp(op);
            if (!parsed.isOk()) return c.fail(parsed.error());
            r.op = *parsed;
            sawOperator = true;
          }
          return Status::ok();
        }));
        if (!sawOperator) return c.fail("missing operator");
        sel.matchExpressions.push_back(std::move(r));
        return Status::ok();
      });
    }
    return Status::ok();
  });
}

Status decodeNodeSelectorRequirements(Ctx& c, od::value& v, std::vector<NodeSelectorRequirement>& out) {
  return forEachElement(c, v, [&](od::value& e) -> Status {
    NodeSelectorRequirement r;
    bool sawOperator = false;
    KD_TRY(forEachField(c, e, [&](std::string_view k, od::value& x) -> Status {
      if (k == "key") return readString(c, x, r.key);
      if (k == "values") return readStringArray(c, x, r.values);
      if (k == "operator") {
        sawOperator = true;
        return readEnum(c, x, kNodeSelectorOps, "operator", r.op);
      }
      return Status::ok();
    }));
    if (!sawOperator) return c.fail("missing operator");
    out.push_back(std::move(r));
    return Status::ok();
  });
}

Status decodeNodeSelectorTerm(Ctx& c, od::value& v, NodeSelectorTerm& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "matchExpressions") return decodeNodeSelectorRequirements(c, f, out.matchExpressions);
    if (key == "matchFields") return decodeNodeSelectorRequirements(c, f, out.matchFields);
    return Status::ok();
  });
}

Status decodeNodeAffinity(Ctx& c, od::value& v, NodeAffinity& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
      bool null = false;
      KD_TRY(isNull(c, f, null));
      if (null) return Status::ok();
      NodeSelector& sel = out.required.emplace();
      return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
        if (k != "nodeSelectorTerms") return Status::ok();
        return forEachElement(
            c, x, [&](od::value& t) -> Status { return decodeNodeSelectorTerm(c, t, sel.terms.emplace_back()); });
      });
    }
    if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      return forEachElement(c, f, [&](od::value& e) -> Status {
        PreferredSchedulingTerm& term = out.preferred.emplace_back();
        return forEachField(c, e, [&](std::string_view k, od::value& x) -> Status {
          if (k == "weight") return readInt(c, x, term.weight);
          if (k == "preference") return decodeNodeSelectorTerm(c, x, term.preference);
          return Status::ok();
        });
      });
    }
    return Status::ok();
  });
}

Status decodePodAffinityTerm(Ctx& c, od::value& v, PodAffinityTerm& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "labelSelector") return decodeLabelSelector(c, f, out.labelSelector);
    if (key == "namespaces") return readStringArray(c, f, out.namespaces);
    if (key == "namespaceSelector") return decodeLabelSelector(c, f, out.namespaceSelector);
    if (key == "topologyKey") return readString(c, f, out.topologyKey);
    if (key == "matchLabelKeys") return readStringArray(c, f, out.matchLabelKeys);
    if (key == "mismatchLabelKeys") return readStringArray(c, f, out.mismatchLabelKeys);
    return Status::ok();
  });
}

Status decodePodAffinity(Ctx& c, od::value& v, PodAffinity& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
      return forEachElement(c, f,
                            [&](od::value& e) { return decodePodAffinityTerm(c, e, out.required.emplace_back()); });
    }
    if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      return forEachElement(c, f, [&](od::value& e) -> Status {
        WeightedPodAffinityTerm& term = out.preferred.emplace_back();
        return forEachField(c, e, [&](std::string_view k, od::value& x) -> Status {
          if (k == "weight") return readInt(c, x, term.weight);
          if (k == "podAffinityTerm") return decodePodAffinityTerm(c, x, term.term);
          return Status::ok();
        });
      });
    }
    return Status::ok();
  });
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

Status decodeAffinity(Ctx& c, od::value& v, SchedulingConstraints& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "nodeAffinity") return decodeOptional(c, f, out.nodeAffinity, decodeNodeAffinity);
    if (key == "podAffinity") return decodeOptional(c, f, out.podAffinity, decodePodAffinity);
    if (key == "podAntiAffinity") return decodeOptional(c, f, out.podAntiAffinity, decodePodAffinity);
    return Status::ok();
  });
}

Status decodeToleration(Ctx& c, od::value& v, Toleration& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "key") return readString(c, f, out.key);
    if (key == "operator") return readEnum(c, f, kTolerationOps, "operator", out.op);
    if (key == "value") return readString(c, f, out.value);
    if (key == "effect") return readEnum(c, f, kTolerationEffects, "effect", out.effect);
    if (key == "tolerationSeconds") return readOptInt64(c, f, out.tolerationSeconds);
    return Status::ok();
  });
}

Status decodeTopologySpread(Ctx& c, od::value& v, TopologySpreadConstraint& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "maxSkew") return readInt(c, f, out.maxSkew);
    if (key == "topologyKey") return readString(c, f, out.topologyKey);
    if (key == "whenUnsatisfiable")
      return readEnum(c, f, kUnsatisfiableActions, "whenUnsatisfiable", out.whenUnsatisfiable);
    if (key == "labelSelector") return decodeLabelSelector(c, f, out.labelSelector);
    if (key == "minDomains") return readOptInt32(c, f, out.minDomains);
    if (key == "matchLabelKeys") return readStringArray(c, f, out.matchLabelKeys);
    if (key == "nodeAffinityPolicy" || key == "nodeTaintsPolicy") {
      auto& policy = key == "nodeAffinityPolicy" ? out.nodeAffinityPolicy : out.nodeTaintsPolicy;
      bool null = false;
      KD_TRY(isNull(c, f, null));
      policy.reset();
      if (null) return Status::ok();
      return readEnum(c, f, kInclusionPolicies, "policy", policy.emplace());
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------------
// Metadata shared by every kind; each kind asks only for the parts it keeps.

struct MetaTargets {
  std::string* name = nullptr;
  Symbol* ns = nullptr;
  std::string* uid = nullptr;
  Labels* labels = nullptr;
  Pod* annotationsOf = nullptr;
  std::vector<OwnerReference>* owners = nullptr;
  std::optional<Timestamp>* created = nullptr;
  std::optional<Timestamp>* deleted = nullptr;
  std::int64_t* generation = nullptr;
};

Status decodeOwnerReference(Ctx& c, od::value& v, OwnerReference& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "apiVersion") return readSymbol(c, f, out.apiVersion);
    if (key == "kind") return readSymbol(c, f, out.kind);
    if (key == "name") return readSymbol(c, f, out.name);
    if (key == "uid") return readString(c, f, out.uid);
    if (key == "controller") return readBool(c, f, out.controller);
    return Status::ok();
  });
}

// Only the annotations kdesched honours are kept; for the flags their presence is what counts.
Status decodePodAnnotations(Ctx& c, od::value& v, Pod& pod) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == kAnnotationEvict || key == kAnnotationPreferNoEviction || key == kAnnotationMirror) {
      std::string_view ignored;
      KD_TRY(readString(c, f, ignored));
      if (key == kAnnotationEvict) pod.annotationEvict = true;
      if (key == kAnnotationPreferNoEviction) pod.annotationPreferNoEviction = true;
      if (key == kAnnotationMirror) pod.mirror = true;
      return Status::ok();
    }
    if (key == kAnnotationConfigSource) return readString(c, f, pod.configSource);
    return Status::ok();
  });
}

Status decodeMeta(Ctx& c, od::value& v, const MetaTargets& m) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "name" && m.name) return readString(c, f, *m.name);
    if (key == "namespace" && m.ns) return readSymbol(c, f, *m.ns);
    if (key == "uid" && m.uid) return readString(c, f, *m.uid);
    if (key == "labels" && m.labels) return readLabels(c, f, *m.labels);
    if (key == "annotations" && m.annotationsOf) return decodePodAnnotations(c, f, *m.annotationsOf);
    if (key == "ownerReferences" && m.owners) {
      m.owners->clear();
      return forEachElement(c, f, [&](od::value& e) { return decodeOwnerReference(c, e, m.owners->emplace_back()); });
    }
    if (key == "creationTimestamp" && m.created) return readTimestamp(c, f, *m.created);
    if (key == "deletionTimestamp" && m.deleted) return readTimestamp(c, f, *m.deleted);
    if (key == "generation" && m.generation) return readInt(c, f, *m.generation);
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------------
// Pod

// What the pod decoder gathers before it can compute the derived fields.
struct PodParts {
  std::vector<ContainerResources> containers;
  std::vector<ContainerResources> initContainers;
  ResourceList overhead;
  // Volumes that name a PVC, in volume order: the claim name, or for an ephemeral volume its
  // volume name (the PVC is "<pod>-<volume>", and the pod name may come later in the document).
  std::vector<std::pair<bool, std::string_view>> claims;
  SchedulingConstraints constraints;
  bool qosFromStatus = false;
};

Status decodeContainer(Ctx& c, od::value& v, bool init, ContainerResources& out) {
  bool restartAlways = false;
  KD_TRY(forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "resources") {
      return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
        if (k == "requests") return readResourceList(c, x, out.requests);
        if (k == "limits") return readResourceList(c, x, out.limits);
        return Status::ok();
      });
    }
    if (key == "restartPolicy") {
      std::string_view policy;
      KD_TRY(readString(c, f, policy));
      restartAlways = policy == "Always";
    }
    return Status::ok();
  }));
  out.restartableInit = init && restartAlways;
  // SetDefaults_Pod: a limit without a request makes the request equal to the limit (per
  // resource). API-server objects already carry it; manifests read from files may not.
  for (const auto& [name, milli] : out.limits) {
    if (!out.requests.has(name)) out.requests.set(name, milli);
  }
  return Status::ok();
}

Status decodeVolume(Ctx& c, od::value& v, Pod& pod, PodParts& parts) {
  std::string_view name;
  std::string_view claimName;
  bool ephemeral = false;
  KD_TRY(forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "name") return readString(c, f, name);
    if (key == "emptyDir" || key == "hostPath" || key == "ephemeral") {
      bool null = false;
      KD_TRY(isNull(c, f, null));
      if (null) return Status::ok();
      if (key == "ephemeral") {
        ephemeral = true;
      } else {
        pod.hasLocalStorage = true;
      }
      return Status::ok();
    }
    if (key == "persistentVolumeClaim") {
      return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
        if (k == "claimName") return readString(c, x, claimName);
        return Status::ok();
      });
    }
    return Status::ok();
  }));
  if (!claimName.empty()) parts.claims.emplace_back(false, claimName);
  if (ephemeral) parts.claims.emplace_back(true, name);
  return Status::ok();
}

Status decodePodSpec(Ctx& c, od::value& v, Pod& pod, PodParts& parts) {
  SchedulingConstraints& sc = parts.constraints;
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "nodeName") return readSymbol(c, f, pod.nodeName);
    if (key == "priority") return readOptInt32(c, f, pod.priority);
    if (key == "priorityClassName") return readSymbol(c, f, pod.priorityClassName);
    if (key == "nodeSelector") return readStringPairs(c, f, sc.nodeSelector);
    if (key == "affinity") return decodeAffinity(c, f, sc);
    if (key == "tolerations") {
      sc.tolerations.clear();
      return forEachElement(c, f, [&](od::value& e) { return decodeToleration(c, e, sc.tolerations.emplace_back()); });
    }
    if (key == "topologySpreadConstraints") {
      sc.topologySpreadConstraints.clear();
      return forEachElement(
          c, f, [&](od::value& e) { return decodeTopologySpread(c, e, sc.topologySpreadConstraints.emplace_back()); });
    }
    if (key == "containers" || key == "initContainers") {
      const bool init = key == "initContainers";
      auto& list = init ? parts.initContainers : parts.containers;
      list.clear();
      return forEachElement(c, f, [&](od::value& e) { return decodeContainer(c, e, init, list.emplace_back()); });
    }
    if (key == "overhead") return readResourceList(c, f, parts.overhead);
    if (key == "volumes") {
      return forEachElement(c, f, [&](od::value& e) { return decodeVolume(c, e, pod, parts); });
    }
    if (key == "resourceClaims") {
      std::size_t n = 0;
      KD_TRY(forEachElement(c, f, [&](od::value&) {
        ++n;
        return Status::ok();
      }));
      pod.hasResourceClaims = n > 0;
    }
    return Status::ok();
  });
}

constexpr std::array<std::pair<std::string_view, PodPhase>, 5> kPodPhases{{
    {"Pending", PodPhase::Pending},
    {"Running", PodPhase::Running},
    {"Succeeded", PodPhase::Succeeded},
    {"Failed", PodPhase::Failed},
    {"Unknown", PodPhase::Unknown},
}};

constexpr std::array<std::pair<std::string_view, QosClass>, 3> kQosClasses{{
    {"BestEffort", QosClass::BestEffort},
    {"Burstable", QosClass::Burstable},
    {"Guaranteed", QosClass::Guaranteed},
}};

// Reads the status of the condition of type `type` in a conditions array, if there is one.
Status readCondition(Ctx& c, od::value& v, std::string_view type, std::optional<std::string_view>& status) {
  return forEachElement(c, v, [&](od::value& e) -> Status {
    std::string_view t, s;
    KD_TRY(forEachField(c, e, [&](std::string_view key, od::value& f) -> Status {
      if (key == "type") return readString(c, f, t);
      if (key == "status") return readString(c, f, s);
      return Status::ok();
    }));
    if (t == type) status = s;
    return Status::ok();
  });
}

Status decodePodStatus(Ctx& c, od::value& v, Pod& pod, PodParts& parts) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "phase") {
      std::optional<std::string_view> phase;
      KD_TRY(readOptString(c, f, phase));
      // Absent means Pending (the zero value); an unrecognised phase is treated as Unknown so a
      // newer API server cannot make whole lists undecodable.
      pod.phase = PodPhase::Pending;
      if (phase && !phase->empty()) {
        pod.phase = PodPhase::Unknown;
        for (const auto& [name, value] : kPodPhases) {
          if (*phase == name) pod.phase = value;
        }
      }
      return Status::ok();
    }
    if (key == "qosClass") {
      std::string_view qos;
      KD_TRY(readString(c, f, qos));
      for (const auto& [name, value] : kQosClasses) {
        if (qos == name) {
          pod.qos = value;
          parts.qosFromStatus = true;
        }
      }
      return Status::ok();
    }
    if (key == "conditions") {
      std::optional<std::string_view> ready;
      KD_TRY(readCondition(c, f, "Ready", ready));
      pod.ready = ready == "True";
      return Status::ok();
    }
    if (key == "startTime") return readTimestamp(c, f, pod.startTime);
    return Status::ok();
  });
}

// Runs a decoder so that no exception (allocation failure, a library throwing) leaves this module.
template <typename F>
Status guarded(F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Status::error(std::string("decoding failed: ") + e.what());
  } catch (...) {
    return Status::error("decoding failed");
  }
}

const std::shared_ptr<const SchedulingConstraints>& noConstraints() {
  static const auto* none = new std::shared_ptr<const SchedulingConstraints>(internConstraints({}));
  return *none;
}

}  // namespace

Status decodePod(od::object obj, Pod& out) {
  return guarded([&]() -> Status {
    out = Pod{};
    out.scheduling = noConstraints();
    Ctx c;
    PodParts parts;
    MetaTargets meta;
    meta.name = &out.name;
    meta.ns = &out.ns;
    meta.uid = &out.uid;
    meta.labels = &out.labels;
    meta.annotationsOf = &out;
    meta.owners = &out.owners;
    meta.created = &out.creationTimestamp;
    meta.deleted = &out.deletionTimestamp;
    KD_TRY(forEachField(c, obj, [&](std::string_view key, od::value& v) -> Status {
      if (key == "metadata") return decodeMeta(c, v, meta);
      if (key == "spec") return decodePodSpec(c, v, out, parts);
      if (key == "status") return decodePodStatus(c, v, out, parts);
      return Status::ok();
    }));
    out.pvcClaimNames.reserve(parts.claims.size());
    for (const auto& [ephemeral, name] : parts.claims) {
      out.pvcClaimNames.push_back(ephemeral ? out.name + "-" + std::string(name) : std::string(name));
    }
    out.requests = computePodRequests(parts.containers, parts.initContainers, parts.overhead);
    if (!parts.qosFromStatus) out.qos = computeQos(parts.containers, parts.initContainers);
    out.scheduling = internConstraints(std::move(parts.constraints));
    return Status::ok();
  });
}

Status decodeNode(od::object obj, Node& out) {
  return guarded([&]() -> Status {
    out = Node{};
    Ctx c;
    ResourceList capacity;
    MetaTargets meta;
    meta.name = &out.name;
    meta.labels = &out.labels;
    meta.created = &out.creationTimestamp;
    KD_TRY(forEachField(c, obj, [&](std::string_view key, od::value& v) -> Status {
      if (key == "metadata") return decodeMeta(c, v, meta);
      if (key == "spec") {
        return forEachField(c, v, [&](std::string_view k, od::value& f) -> Status {
          if (k == "unschedulable") return readBool(c, f, out.unschedulable);
          if (k != "taints") return Status::ok();
          out.taints.clear();
          return forEachElement(c, f, [&](od::value& e) -> Status {
            Taint& taint = out.taints.emplace_back();
            bool sawEffect = false;
            KD_TRY(forEachField(c, e, [&](std::string_view tk, od::value& x) -> Status {
              if (tk == "key") return readString(c, x, taint.key);
              if (tk == "value") return readString(c, x, taint.value);
              if (tk == "effect") {
                sawEffect = true;
                return readEnum(c, x, kTaintEffects, "taint effect", taint.effect);
              }
              return Status::ok();
            }));
            return sawEffect ? Status::ok() : c.fail("missing effect");
          });
        });
      }
      if (key == "status") {
        return forEachField(c, v, [&](std::string_view k, od::value& f) -> Status {
          if (k == "allocatable") return readResourceList(c, f, out.allocatable);
          if (k == "capacity") return readResourceList(c, f, capacity);
          if (k == "conditions") {
            std::optional<std::string_view> ready;
            KD_TRY(readCondition(c, f, "Ready", ready));
            if (ready) out.readyCondition = *ready == "True";
          }
          return Status::ok();
        });
      }
      return Status::ok();
    }));
    if (out.allocatable.empty()) out.allocatable = std::move(capacity);
    out.nameSym = intern(out.name);
    return Status::ok();
  });
}

namespace {

// IntOrString in PDBs: an integer, or a percentage string "50%".
Status readIntOrPercent(Ctx& c, od::value& v, std::optional<IntOrPercent>& out) {
  od::json_type t;
  KD_TRY(peek(c, v, t));
  out.reset();
  if (t == od::json_type::null) return Status::ok();
  if (t == od::json_type::number) {
    std::optional<std::int32_t> n;
    KD_TRY(readOptInt32(c, v, n));
    out = IntOrPercent{false, *n};
    return Status::ok();
  }
  if (t != od::json_type::string) return wrongType(c, "integer or percent string", t);
  std::string_view s;
  KD_TRY(readString(c, v, s));
  std::int32_t pct = 0;
  const std::string_view digits = s.substr(0, s.empty() ? 0 : s.size() - 1);
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pct);
  if (s.size() < 2 || s.back() != '%' || ec != std::errc() || ptr != digits.data() + digits.size() ||
      !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    return c.fail("invalid int-or-percent \"" + std::string(s) + "\"");
  }
  out = IntOrPercent{true, pct};
  return Status::ok();
}

}  // namespace

Status decodePdb(od::object obj, PodDisruptionBudget& out) {
  return guarded([&]() -> Status {
    out = PodDisruptionBudget{};
    Ctx c;
    MetaTargets meta;
    meta.name = &out.name;
    meta.ns = &out.ns;
    meta.generation = &out.generation;
    return forEachField(c, obj, [&](std::string_view key, od::value& v) -> Status {
      if (key == "metadata") return decodeMeta(c, v, meta);
      if (key == "spec") {
        return forEachField(c, v, [&](std::string_view k, od::value& f) -> Status {
          if (k == "selector") return decodeLabelSelector(c, f, out.selector);
          if (k == "minAvailable") return readIntOrPercent(c, f, out.minAvailable);
          if (k == "maxUnavailable") return readIntOrPercent(c, f, out.maxUnavailable);
          return Status::ok();
        });
      }
      if (key == "status") {
        // A controller that has processed the PDB writes at least observedGeneration; an empty
        // status object means nobody has yet.
        return forEachField(c, v, [&](std::string_view k, od::value& f) -> Status {
          out.hasStatus = true;
          if (k == "observedGeneration") return readInt(c, f, out.observedGeneration);
          if (k == "disruptionsAllowed") return readOptInt32(c, f, out.disruptionsAllowed);
          if (k == "currentHealthy") return readInt(c, f, out.currentHealthy);
          if (k == "desiredHealthy") return readInt(c, f, out.desiredHealthy);
          if (k == "expectedPods") return readInt(c, f, out.expectedPods);
          return Status::ok();
        });
      }
      return Status::ok();
    });
  });
}

Status decodeNamespace(od::object obj, Namespace& out) {
  return guarded([&]() -> Status {
    out = Namespace{};
    Ctx c;
    MetaTargets meta;
    meta.name = &out.name;
    meta.labels = &out.labels;
    return forEachField(c, obj, [&](std::string_view key, od::value& v) -> Status {
      if (key == "metadata") return decodeMeta(c, v, meta);
      if (key == "status") {
        return forEachField(c, v, [&](std::string_view k, od::value& f) -> Status {
          if (k != "phase") return Status::ok();
          std::string_view phase;
          KD_TRY(readString(c, f, phase));
          out.terminating = phase == "Terminating";
          return Status::ok();
        });
      }
      return Status::ok();
    });
  });
}

Status decodePriorityClass(od::object obj, PriorityClass& out) {
  return guarded([&]() -> Status {
    out = PriorityClass{};
    Ctx c;
    MetaTargets meta;
    meta.name = &out.name;
    return forEachField(c, obj, [&](std::string_view key, od::value& v) -> Status {
      if (key == "metadata") return decodeMeta(c, v, meta);
      if (key == "value") return readInt(c, v, out.value);
      return Status::ok();
    });
  });
}

Status decodePvc(od::object obj, PersistentVolumeClaim& out) {
  return guarded([&]() -> Status {
    out = PersistentVolumeClaim{};
    Ctx c;
    MetaTargets meta;
    meta.name = &out.name;
    meta.ns = &out.ns;
    return forEachField(c, obj, [&](std::string_view key, od::value& v) -> Status {
      if (key == "metadata") return decodeMeta(c, v, meta);
      if (key == "spec") {
        return forEachField(c, v, [&](std::string_view k, od::value& f) -> Status {
          if (k != "storageClassName") return Status::ok();
          std::optional<std::string_view> sc;
          KD_TRY(readOptString(c, f, sc));
          if (sc) out.storageClassName = std::string(*sc);
          return Status::ok();
        });
      }
      return Status::ok();
    });
  });
}

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

Status decodeObject(Kind kind, od::object obj, Object& out) {
  switch (kind) {
    case Kind::Pod: return decodePod(obj, out.emplace<Pod>());
    case Kind::Node: return decodeNode(obj, out.emplace<Node>());
    case Kind::PodDisruptionBudget: return decodePdb(obj, out.emplace<PodDisruptionBudget>());
    case Kind::Namespace: return decodeNamespace(obj, out.emplace<Namespace>());
    case Kind::PriorityClass: return decodePriorityClass(obj, out.emplace<PriorityClass>());
    case Kind::PersistentVolumeClaim: return decodePvc(obj, out.emplace<PersistentVolumeClaim>());
    case Kind::Unknown: break;
  }
  return Status::error("cannot decode an object of unknown kind");
}

Result<Object> decodeObjectJson(std::string_view json) {
  try {
    const simdjson::padded_string padded(json);
    thread_local od::parser parser;
    od::document doc;
    if (auto e = parser.iterate(padded).get(doc))
      return Status::error(std::string("invalid JSON: ") + simdjson::error_message(e));
    od::object obj;
    if (auto e = doc.get_object().get(obj))
      return Status::error(std::string("expected a JSON object: ") + simdjson::error_message(e));
    // The kind may follow the fields it governs, so look it up first and then start over.
    std::string kindName;
    {
      std::string_view k;
      auto field = obj.find_field_unordered("kind");
      if (field.error() == simdjson::NO_SUCH_FIELD) return Status::error("object has no kind");
      if (auto e = field.get_string().get(k))
        return Status::error(std::string("kind: expected a string: ") + simdjson::error_message(e));
      kindName.assign(k);  // the rewind below reuses the buffer k points into
    }
    const Kind kind = kindFromString(kindName);
    if (kind == Kind::Unknown) return Status::error("unknown kind \"" + kindName + "\"");
    doc.rewind();
    if (auto e = doc.get_object().get(obj))
      return Status::error(std::string("invalid JSON: ") + simdjson::error_message(e));
    Object out;
    if (Status s = decodeObject(kind, obj, out); !s.isOk()) return s.prefix(kindName);
    // Past the root object the iterator must be out of bounds; anything else is trailing content.
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
      return Status::error("invalid JSON: trailing content after the object");
    }
    return out;
  } catch (const std::exception& e) {
    return Status::error(std::string("decoding failed: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// RFC 3339 timestamps.

namespace {

bool readDigits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t daysFromCivil(int y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * static_cast<unsigned>(m > 2 ? m - 3 : m + 9) + 2) / 5 + static_cast<unsigned>(d) - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

int daysInMonth(int y, int m) {
  static constexpr std::array<int, 12> kDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[static_cast<std::size_t>(m - 1)];
}

}  // namespace

Result<Timestamp> parseTimestamp(std::string_view text) {
  auto bad = [&] { return Status::error("invalid RFC 3339 timestamp \"" + std::string(text) + "\""); };
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), as Go's time.RFC3339 layout reads it.
  int year, month, day, hour, minute, second;
  if (!readDigits(text, 0, 4, year) || text.size() < 19 || text[4] != '-' || !readDigits(text, 5, 2, month) ||
      text[7] != '-' || !readDigits(text, 8, 2, day) || text[10] != 'T' || !readDigits(text, 11, 2, hour) ||
      text[13] != ':' || !readDigits(text, 14, 2, minute) || text[16] != ':' || !readDigits(text, 17, 2, second)) {
    return bad();
  }
  std::size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    const std::size_t start = ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) return bad();
  }
  std::int64_t offset = 0;
  if (pos < text.size() && text[pos] == 'Z') {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh, om;
    if (!readDigits(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !readDigits(text, pos + 4, 2, om) || oh > 23 || om > 59) {
      return bad();
    }
    offset = (oh * 3600 + om * 60) * (text[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != text.size()) return bad();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    return bad();
  }
  return daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
}

// ---------------------------------------------------------------------------------------------
// YAML → JSON, typing plain scalars the way sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) does.

namespace {

constexpr int kMaxYamlDepth = 512;

void appendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (u < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 0xf];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

bool isOneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), s) != options.end();
}

// strconv.ParseInt/ParseUint with base 0: optional sign (signed only), then 0x/0o/0b prefixes or a
// leading 0 for octal, else decimal. Returns the value as JSON integer text.
std::optional<std::string> goBaseZeroInt(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = static_cast<char>(s[1] | 0x20);
    if (p == 'x') base = 16;
    if (p == 'o') base = 8;
    if (p == 'b') base = 2;
    if (base != 10) {
      s.remove_prefix(2);
    } else {
      base = 8;  // "0755"
      s.remove_prefix(1);
    }
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  // Signed range for negatives (ParseInt); up to uint64 for non-negatives (ParseUint fallback).
  if (negative) {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) return std::nullopt;
    return v == 0 ? std::string("0") : "-" + std::to_string(v);
  }
  return std::to_string(v);
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ (go-yaml's yamlStyleFloat).
bool isYamlStyleFloat(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// The shortest text that reads back as the same double, as Go's encoder writes floats.
std::optional<std::string> floatJson(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double d = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(d)) return std::nullopt;
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), d);
  return std::string(buf.data(), res.ptr);
}

// The JSON for a plain (unquoted, untagged) scalar; nullopt means "a string". Errors for values
// YAML can type but JSON cannot hold.
Result<std::optional<std::string>> resolvePlain(std::string_view s) {
  using Resolved = std::optional<std::string>;
  if (isOneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) return Resolved("true");
  if (isOneOf(s, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) {
    return Resolved("false");
  }
  if (isOneOf(s, {"", "~", "null", "Null", "NULL"})) return Resolved("null");
  if (isOneOf(s,
              {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"})) {
    return Status::error("\"" + std::string(s) + "\" is not representable in JSON");
  }
  if (s == "<<") return Status::error("YAML merge keys (<<) are not supported");
  const char first = s.front();
  if (first == '.') {
    if (isYamlStyleFloat(s)) return Resolved(floatJson(s));
    return Resolved();
  }
  if (!((first >= '0' && first <= '9') || first == '+' || first == '-')) return Resolved();
  std::string plain(s);
  std::erase(plain, '_');
  if (auto i = goBaseZeroInt(plain)) return Resolved(std::move(i));
  if (isYamlStyleFloat(plain)) return Resolved(floatJson(plain));
  return Resolved();
}

class YamlToJson {
 public:
  Status emit(const YAML::Node& node, std::string& out, int depth) {
    if (depth > kMaxYamlDepth) return failAt(node, "nesting deeper than " + std::to_string(kMaxYamlDepth) + " levels");
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null: out += "null"; return Status::ok();
      case YAML::NodeType::Scalar: return emitScalar(node, out);
      case YAML::NodeType::Sequence: {
        out += '[';
        bool first = true;
        for (const auto& item : node) {
          if (!first) out += ',';
          first = false;
          KD_TRY(emit(item, out, depth + 1));
        }
        out += ']';
        return Status::ok();
      }
      case YAML::NodeType::Map: {
        out += '{';
        // yaml-cpp keeps repeated keys as separate pairs; YAML forbids them and so does kubectl.
        std::unordered_set<std::string> seen;
        bool first = true;
        for (const auto& kv : node) {
          std::string key;
          KD_TRY(keyText(kv.first, key));
          if (!seen.insert(key).second) return failAt(kv.first, "duplicate key \"" + key + "\"");
          if (!first) out += ',';
          first = false;
          appendJsonString(out, key);
          out += ':';
          KD_TRY(emit(kv.second, out, depth + 1));
        }
        out += '}';
        return Status::ok();
      }
    }
    return failAt(node, "unsupported YAML node");
  }

 private:
  static Status failAt(const YAML::Node& node, const std::string& what) {
    const YAML::Mark m = node.Mark();
    if (m.is_null()) return Status::error(what);
    return Status::error("line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1) + ": " +
                         what);
  }

  // "?" marks a plain scalar (typed by resolution), "!" a quoted or block scalar (a string).
  static bool resolvable(const std::string& tag) {
    return tag == "?" || tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
           tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null";
  }

  Status emitScalar(const YAML::Node& node, std::string& out) {
    const std::string& text = node.Scalar();
    if (resolvable(node.Tag())) {
      auto r = resolvePlain(text);
      if (!r.isOk()) return failAt(node, r.error());
      if (*r) {
        out += **r;
        return Status::ok();
      }
    }
    appendJsonString(out, text);
    return Status::ok();
  }

  // JSON keys are strings: a plain key that YAML types (true, 16, null) is written as that value's text.
  Status keyText(const YAML::Node& key, std::string& out) {
    if (key.IsNull()) {
      out = "null";
      return Status::ok();
    }
    if (!key.IsScalar()) return failAt(key, "mapping keys must be scalars");
    out = key.Scalar();
    if (resolvable(key.Tag())) {
      auto r = resolvePlain(out);
      if (!r.isOk()) return failAt(key, r.error());
      if (*r) out = **r;
    }
    return Status::ok();
  }
};

Result<std::vector<std::string>> convertYaml(std::string_view yaml) {
  try {
    std::string text(yaml);
    // Scan first: yaml-cpp 0.7's LoadAll can loop forever on malformed input (see yaml_scan.h).
    YamlScan scan = scanYaml(text);
    if (scan.stuck)
      return Status::error("invalid YAML at line " + std::to_string(scan.stuckAt.line + 1) + ", column " +
                           std::to_string(scan.stuckAt.column + 1) + ": unexpected token at the start of a document");
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    std::vector<std::string> out;
    out.reserve(docs.size());
    YamlToJson converter;
    for (const auto& doc : docs) {
      if (doc.IsNull()) continue;  // "---" with nothing after it
      std::string json;
      json.reserve(yaml.size());
      KD_TRY(converter.emit(doc, json, 0));
      out.push_back(std::move(json));
    }
    return out;
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return Status::error("invalid YAML: " + e.msg);
    return Status::error("invalid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                         std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return Status::error(std::string("invalid YAML: ") + e.what());
  }
}

}  // namespace

Result<std::string> yamlDocumentToJson(std::string_view yaml) {
  auto docs = convertYaml(yaml);
  if (!docs.isOk()) return docs.status();
  if (docs->empty()) return std::string("null");
  if (docs->size() > 1) return Status::error("expected one YAML document, found " + std::to_string(docs->size()));
  return std::move(docs->front());
}

Result<std::vector<std::string>> yamlStreamToJson(std::string_view yaml) { return convertYaml(yaml); }

}  // namespace kdesched::api
