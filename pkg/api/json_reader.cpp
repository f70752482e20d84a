#include "pkg/api/detail/json_reader.h"

#include "pkg/api/timestamp.h"

namespace kdesched::api::detail {

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
  // Beyond int64 milli-units saturates (kSaturatedMilli): the API server stores such amounts, and
  // one object must not make its whole resource undecodable. Whoever keeps the object names it.
  auto q = parseQuantityMilliSaturating(trimSpace(text));
  if (!q.isOk()) return c.fail(q.error());
  out = q->milli;
  return Status::ok();
}

Status readResourceList(Ctx& c, od::value& v, ResourceList& out) {
  return forEachField(c, v, [&](std::string_view name, od::value& val) -> Status {
    std::int64_t milli = 0;
    KD_TRY(readQuantity(c, val, milli));
    // As the API server validates requests, limits, overhead, capacity and allocatable: a negative
    // one would show as "cpu -75%" or silently empty a node.
    if (milli < 0)
      return c.fail("must be greater than or equal to 0, got a negative quantity for " + std::string(name));
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

Status readTimestamp(Ctx& c, od::value& v, OptionalTime& out) {
  std::optional<Timestamp> t;
  KD_TRY(readTimestamp(c, v, t));
  out = t;
  return Status::ok();
}

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

namespace {

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
    if (key == kAnnotationConfigSource) return readSymbol(c, f, pod.configSource);
    return Status::ok();
  });
}

}  // namespace

Status decodeMeta(Ctx& c, od::value& v, const MetaTargets& m) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "name" && m.name) return readString(c, f, *m.name);
    if (key == "namespace" && m.ns) return readSymbol(c, f, *m.ns);
    if (key == "uid" && m.uid) {
      std::string_view uid;
      KD_TRY(readString(c, f, uid));
      *m.uid = Uid(uid);
      return Status::ok();
    }
    if (key == "labels" && m.labels) return readLabels(c, f, *m.labels);
    if (key == "annotations" && m.annotationsOf) return decodePodAnnotations(c, f, *m.annotationsOf);
    if (key == "ownerReferences" && m.owners) {
      std::vector<OwnerReference> refs;
      KD_TRY(forEachElement(c, f, [&](od::value& e) { return decodeOwnerReference(c, e, refs.emplace_back()); }));
      *m.owners = OwnerRefs(std::move(refs));
      return Status::ok();
    }
    if (key == "creationTimestamp" && m.created) return readTimestamp(c, f, *m.created);
    if (key == "deletionTimestamp" && m.deleted) return readTimestamp(c, f, *m.deleted);
    if (key == "generation" && m.generation) return readInt(c, f, *m.generation);
    return Status::ok();
  });
}

}  // namespace kdesched::api::detail
