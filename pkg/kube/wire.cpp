#include "pkg/kube/wire.h"

#include <ctime>
#include <exception>

#include "pkg/api/detail/ondemand.h"
#include "pkg/cluster/store.h"

namespace kdesched::kube {
namespace {

namespace od = simdjson::ondemand;

// simdjson reads up to SIMDJSON_PADDING bytes past the end of the input.
simdjson::padded_string_view padded(std::string& s) {
  if (s.capacity() < s.size() + simdjson::SIMDJSON_PADDING) s.reserve(s.size() + simdjson::SIMDJSON_PADDING);
  return simdjson::padded_string_view(s.data(), s.size(), s.capacity());
}

Status jsonError(const std::string& where, simdjson::error_code e) {
  return Status::error(where + (where.empty() ? "" : ": ") + "malformed JSON: " + simdjson::error_message(e));
}

// Anything after the root value other than whitespace means the text was not one JSON document.
Status expectEnd(od::document& doc, const std::string& where) {
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
    return Status::error(where + (where.empty() ? "" : ": ") + "malformed JSON: trailing content after the object");
  }
  return Status::ok();
}

Status copyString(od::value v, std::string& out, const char* where) {
  std::string_view s;
  if (auto e = v.get_string().get(s))
    return Status::error(std::string(where) + ": must be a string (" + simdjson::error_message(e) + ")");
  out.assign(s);
  return Status::ok();
}

Status decodeListMeta(od::value v, ListPage& out) {
  od::object meta;
  if (auto e = v.get_object().get(meta)) return jsonError("metadata", e);
  for (auto field : meta) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return jsonError("metadata", e);
    if (key == "resourceVersion") {
      if (Status s = copyString(field.value(), out.resourceVersion, "metadata.resourceVersion"); !s.isOk()) return s;
    } else if (key == "continue") {
      if (Status s = copyString(field.value(), out.continueToken, "metadata.continue"); !s.isOk()) return s;
    }
  }
  return Status::ok();
}

Status decodeItems(api::Kind kind, od::value v, ListPage& out) {
  od::array items;
  if (auto e = v.get_array().get(items)) return jsonError("items", e);
  std::size_t i = 0;
  for (auto element : items) {
    const std::string where = "items[" + std::to_string(i++) + "]";
    od::object item;
    if (auto e = element.get_object().get(item)) return jsonError(where, e);
    api::Object obj;
    if (Status s = api::decodeObject(kind, item, obj); !s.isOk()) {
      // The iterator skips what is left of this item. Broken JSON inside it leaves the parser in
      // error, so the next item or the end of the page fails the whole page, as it must.
      out.undecodable.push_back({undecodableKey(obj), s.message()});
      continue;
    }
    out.objects.push_back(std::move(obj));
  }
  return Status::ok();
}

Result<WatchEventType> parseType(std::string_view t) {
  if (t == "ADDED") return WatchEventType::Added;
  if (t == "MODIFIED") return WatchEventType::Modified;
  if (t == "DELETED") return WatchEventType::Deleted;
  if (t == "BOOKMARK") return WatchEventType::Bookmark;
  if (t == "ERROR") return WatchEventType::Error;
  return Status::error("type: unknown watch event type \"" + std::string(t) + "\"");
}

// Whether a bookmark's metadata.annotations mark the end of a watch-list's initial events.
Status decodeBookmarkAnnotations(od::value v, WatchEvent& out) {
  bool null = false;
  if (auto e = v.is_null().get(null)) return jsonError("object.metadata.annotations", e);
  if (null) return Status::ok();
  od::object annotations;
  if (auto e = v.get_object().get(annotations)) return jsonError("object.metadata.annotations", e);
  for (auto field : annotations) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return jsonError("object.metadata.annotations", e);
    if (key != kInitialEventsEndAnnotation) continue;
    std::string_view value;
    if (auto e = field.value().get_string().get(value))
      return jsonError("object.metadata.annotations[" + std::string(key) + "]", e);
    out.initialEventsEnd = value == "true";
  }
  return Status::ok();
}

// A bookmark carries its resourceVersion and maybe the end-of-initial-events annotation; the rest
// (an empty object of the kind) is skipped.
Status decodeBookmark(od::object obj, WatchEvent& out) {
  bool haveMeta = false, haveRv = false;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return jsonError("object", e);
    if (key != "metadata") continue;
    haveMeta = true;
    od::object meta;
    if (auto e = field.value().get_object().get(meta)) return jsonError("object.metadata", e);
    for (auto m : meta) {
      std::string_view name;
      if (auto e = m.unescaped_key().get(name)) return jsonError("object.metadata", e);
      if (name == "resourceVersion") {
        if (Status s = copyString(m.value(), out.resourceVersion, "object.metadata.resourceVersion"); !s.isOk())
          return s;
        haveRv = true;
      } else if (name == "annotations") {
        if (Status s = decodeBookmarkAnnotations(m.value(), out); !s.isOk()) return s;
      }
    }
  }
  if (!haveMeta) return Status::error("object.metadata: missing");
  if (!haveRv) return Status::error("object.metadata.resourceVersion: missing");
  return Status::ok();
}

// The event's object: its resourceVersion first (the decoders do not keep it), then the object.
Status decodeEventObject(api::Kind kind, od::value v, WatchEvent& out) {
  od::object obj;
  if (auto e = v.get_object().get(obj)) return jsonError("object", e);
  if (out.type == WatchEventType::Error) {
    std::string_view raw;
    if (auto e = obj.raw_json().get(raw)) return jsonError("object", e);
    out.error = decodeStatusJson(raw);
    return Status::ok();
  }
  if (out.type == WatchEventType::Bookmark) return decodeBookmark(obj, out);
  {
    od::object meta;
    auto m = obj.find_field_unordered("metadata");
    if (m.error() == simdjson::NO_SUCH_FIELD) return Status::error("object.metadata: missing");
    if (auto e = m.get_object().get(meta)) return jsonError("object.metadata", e);
    auto rv = meta.find_field_unordered("resourceVersion");
    if (rv.error() == simdjson::NO_SUCH_FIELD) return Status::error("object.metadata.resourceVersion: missing");
    if (rv.error()) return jsonError("object.metadata.resourceVersion", rv.error());
    if (Status s = copyString(rv.value_unsafe(), out.resourceVersion, "object.metadata.resourceVersion"); !s.isOk())
      return s;
  }
  if (auto e = obj.reset().error()) return jsonError("object", e);
  if (Status s = api::decodeObject(kind, obj, out.object); !s.isOk()) {
    out.undecodable = UndecodableObject{undecodableKey(out.object), s.message()};
    out.object = api::Object{};
  }
  return Status::ok();
}

}  // namespace

std::string undecodableKey(const api::Object& obj) {
  return std::visit(
      [](const auto& o) {
        if constexpr (requires { o.ns; }) {
          if (o.ns.view().empty()) return std::string();
        }
        return o.name.empty() ? std::string() : cluster::objectKey(o);
      },
      obj);
}

std::string_view toString(WatchEventType t) {
  switch (t) {
    case WatchEventType::Added: return "ADDED";
    case WatchEventType::Modified: return "MODIFIED";
    case WatchEventType::Deleted: return "DELETED";
    case WatchEventType::Bookmark: return "BOOKMARK";
    case WatchEventType::Error: return "ERROR";
  }
  return "UNKNOWN";
}

Status decodeListPage(api::Kind kind, std::string& body, ListPage& out) {
  try {
    od::parser parser;
    od::document doc;
    if (auto e = parser.iterate(padded(body)).get(doc)) return jsonError("", e);
    od::object root;
    if (auto e = doc.get_object().get(root)) return jsonError("", e);
    bool sawItems = false;
    for (auto field : root) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return jsonError("", e);
      if (key == "metadata") {
        if (Status s = decodeListMeta(field.value(), out); !s.isOk()) return s;
      } else if (key == "items") {
        sawItems = true;
        od::value v = field.value();
        bool null = false;
        if (auto e = v.is_null().get(null)) return jsonError("items", e);
        if (!null) {
          if (Status s = decodeItems(kind, v, out); !s.isOk()) return s;
        }
      }
    }
    if (Status s = expectEnd(doc, ""); !s.isOk()) return s;
    if (!sawItems) return Status::error("not a list: no items field");
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(std::string("decoding the list failed: ") + e.what());
  }
}

Status decodeWatchEvent(api::Kind kind, std::string& line, api::JsonParser& parser, WatchEvent& out) {
  try {
    out = WatchEvent{};
    od::document doc;
    if (auto e = parser.impl().parser.iterate(padded(line)).get(doc)) return jsonError("", e);
    od::object root;
    if (auto e = doc.get_object().get(root)) return jsonError("", e);
    bool haveType = false;
    bool objectBeforeType = false;
    bool haveObject = false;
    for (auto field : root) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return jsonError("", e);
      // A repeated field is refused: with a second "type" after the object, the event kept the
      // object decoded (or skipped, for a BOOKMARK) under the first type.
      if ((key == "type" && haveType) || (key == "object" && haveObject)) {
        return Status::error(std::string(key) + ": appears more than once in the event");
      }
      if (key == "type") {
        std::string_view t;
        if (auto e = field.value().get_string().get(t)) return jsonError("type", e);
        auto type = parseType(t);
        if (!type.isOk()) return type.status();
        out.type = *type;
        haveType = true;
      } else if (key == "object") {
        haveObject = true;
        if (!haveType) {
          // The API server writes "type" first; for any other order, come back for the object.
          objectBeforeType = true;
          continue;
        }
        if (Status s = decodeEventObject(kind, field.value(), out); !s.isOk()) return s;
      }
    }
    if (Status s = expectEnd(doc, ""); !s.isOk()) return s;
    if (!haveType) return Status::error("type: missing");
    if (!haveObject) return Status::error("object: missing");
    if (objectBeforeType) {
      doc.rewind();
      if (auto e = doc.get_object().get(root)) return jsonError("", e);
      auto obj = root.find_field_unordered("object");
      if (obj.error()) return jsonError("object", obj.error());
      if (Status s = decodeEventObject(kind, obj.value_unsafe(), out); !s.isOk()) return s;
    }
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(std::string("decoding the watch event failed: ") + e.what());
  }
}

std::string rfc3339(Clock::WallTime t, bool micros) {
  const auto since = t.time_since_epoch();
  const auto secs = std::chrono::floor<std::chrono::seconds>(since);
  const std::time_t tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  if (micros) {
    const long long us = std::chrono::duration_cast<std::chrono::microseconds>(since - secs).count();
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us);
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}

}  // namespace kdesched::kube
