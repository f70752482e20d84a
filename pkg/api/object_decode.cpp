// Decoding the kinds other than Pod (Node, PodDisruptionBudget, Namespace, PriorityClass,
// PersistentVolumeClaim), dispatching on a kind, and one object from JSON text.
#include <charconv>
#include <string>

#include "pkg/api/detail/json_reader.h"
#include "pkg/api/detail/ondemand.h"
#include "pkg/api/detail/pod_parts.h"

namespace kdesched::api {

// The JSON reader is this file's vocabulary: every decoder below uses it.
using namespace detail;  // NOLINT(google-build-using-namespace)

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

JsonParser::JsonParser() : impl_(std::make_unique<Impl>()) {}
JsonParser::~JsonParser() = default;
JsonParser::JsonParser(JsonParser&&) noexcept = default;
JsonParser& JsonParser::operator=(JsonParser&&) noexcept = default;

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
          if (k == "unhealthyPodEvictionPolicy") {
            std::string policy;
            KD_TRY(readString(c, f, policy));
            out.unhealthyAlwaysAllow = policy == "AlwaysAllow";
          }
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

namespace {

Status decodeByKind(Kind kind, od::object obj, Object& out) {
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

}  // namespace

Status decodeObject(Kind kind, od::object obj, Object& out) {
  KD_TRY(decodeByKind(kind, obj, out));
  // Every object the API server stores has a name; without one a snapshot's pod was planned for
  // eviction as "default/".
  const bool named = std::visit([](const auto& o) { return !o.name.empty(); }, out);
  if (!named) return Status::error("metadata.name: missing; every object has a name");
  return Status::ok();
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

}  // namespace kdesched::api
