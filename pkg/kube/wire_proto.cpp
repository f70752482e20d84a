#include "pkg/kube/wire_proto.h"

#include <algorithm>
#include <cctype>

#include "pkg/api/decode_proto.h"
#include "pkg/api/detail/proto_reader.h"

namespace kdesched::kube {
namespace {

using namespace api::detail::proto;  // NOLINT(google-build-using-namespace): this file's vocabulary
using api::detail::At;
using api::detail::FieldPath;

constexpr std::string_view kMagic{"k8s\0", 4};

constexpr Fields<2> kUnknown{{{1, "typeMeta"}, {2, "raw"}}};
constexpr Fields<2> kTypeMeta{{{1, "apiVersion"}, {2, "kind"}}};
constexpr Fields<2> kList{{{1, "metadata"}, {2, "items"}}};
constexpr Fields<2> kListMeta{{{2, "resourceVersion"}, {3, "continue"}}};
constexpr Fields<2> kWatchEvent{{{1, "type"}, {2, "object"}}};
constexpr Fields<1> kRawExtension{{{1, ""}}};  // its raw bytes; JSON shows the object inline
constexpr Fields<1> kObjectOfEvent{{{1, "metadata"}}};
constexpr Fields<2> kBookmarkMeta{{{6, "resourceVersion"}, {12, "annotations"}}};
constexpr Fields<5> kStatus{{{2, "status"}, {3, "message"}, {4, "reason"}, {5, "details"}, {6, "code"}}};
constexpr Fields<2> kStatusDetails{{{4, "causes"}, {5, "retryAfterSeconds"}}};
constexpr Fields<3> kStatusCause{{{1, "reason"}, {2, "message"}, {3, "field"}}};

// The magic and the runtime.Unknown around an object: its kind and its own message.
struct Envelope {
  std::string_view kind;
  std::string_view raw;
};

Status unwrap(FieldPath& c, std::string_view body, Envelope& out) {
  if (!hasProtobufMagic(body)) return c.fail("not a protobuf object: the body does not start with \"k8s\\0\"");
  out = Envelope{};
  return forEachField(c, body.substr(kMagic.size()), kUnknown, [&](const Field& f) -> Status {
    if (f.number == 2) return readBytes(c, f, out.raw);
    return forEachField(c, f, kTypeMeta, [&](const Field& t) -> Status {
      if (t.number == 2) return readBytes(c, t, out.kind);
      return Status::ok();
    });
  });
}

Result<WatchEventType> parseType(std::string_view t) {
  if (t == "ADDED") return WatchEventType::Added;
  if (t == "MODIFIED") return WatchEventType::Modified;
  if (t == "DELETED") return WatchEventType::Deleted;
  if (t == "BOOKMARK") return WatchEventType::Bookmark;
  if (t == "ERROR") return WatchEventType::Error;
  return Status::error("type: unknown watch event type \"" + std::string(t) + "\"");
}

// The object's metadata.resourceVersion (the decoders do not keep it) and, for a bookmark, whether
// it ends a watch-list's initial events.
Status readEventMeta(FieldPath& c, std::string_view object, WatchEvent& out) {
  bool haveMeta = false, haveRv = false;
  KD_TRY(forEachField(c, object, kObjectOfEvent, [&](const Field& m) -> Status {
    haveMeta = true;
    return forEachField(c, m, kBookmarkMeta, [&](const Field& f) -> Status {
      if (f.number == 6) {
        haveRv = true;
        return readString(c, f, out.resourceVersion);
      }
      if (out.type != WatchEventType::Bookmark) return Status::ok();
      std::string_view key, value;
      KD_TRY(readMapEntry(c, f, key, value));
      if (key == kInitialEventsEndAnnotation) out.initialEventsEnd = value == "true";
      return Status::ok();
    });
  }));
  At meta(c, "metadata");
  if (!haveMeta) return c.fail("missing");
  At rv(c, "resourceVersion");
  if (!haveRv) return c.fail("missing");
  return Status::ok();
}

Status decodeEventObject(api::Kind kind, FieldPath& c, std::string_view body, WatchEvent& out) {
  if (out.type == WatchEventType::Error) {
    // A Status, in the stream's encoding; JSON too, should a server embed it so.
    if (!hasProtobufMagic(body)) {
      out.error = decodeStatusJson(body);
      return Status::ok();
    }
    if (!decodeStatusProto(body, out.error)) return c.fail("not a Status object");
    return Status::ok();
  }
  Envelope env;
  KD_TRY(unwrap(c, body, env));
  KD_TRY(readEventMeta(c, env.raw, out));
  if (out.type == WatchEventType::Bookmark) return Status::ok();
  if (Status s = api::decodeObjectProto(kind, env.raw, out.object); !s.isOk()) {
    out.undecodable = UndecodableObject{undecodableKey(out.object), s.message()};
    out.object = api::Object{};
  }
  return Status::ok();
}

}  // namespace

bool isProtobufContentType(std::string_view contentType) {
  const std::size_t end = contentType.find(';');
  std::string_view media = contentType.substr(0, end);
  while (!media.empty() && std::isspace(static_cast<unsigned char>(media.back()))) media.remove_suffix(1);
  while (!media.empty() && std::isspace(static_cast<unsigned char>(media.front()))) media.remove_prefix(1);
  return media.size() == kProtobufMediaType.size() &&
         std::equal(media.begin(), media.end(), kProtobufMediaType.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

bool hasProtobufMagic(std::string_view body) { return body.substr(0, kMagic.size()) == kMagic; }

Status decodeListPageProto(api::Kind kind, std::string_view body, ListPage& out) {
  return api::detail::guarded([&]() -> Status {
    FieldPath c;
    Envelope env;
    KD_TRY(unwrap(c, body, env));
    const std::string listKind = std::string(api::toString(kind)) + "List";
    if (env.kind != listKind)
      return Status::error("not a list: a " + std::string(env.kind.empty() ? "body without a kind" : env.kind) +
                           " where a " + listKind + " was expected");
    return forEachField(c, env.raw, kList, [&](const Field& f) -> Status {
      if (f.number == 1) {
        return forEachField(c, f, kListMeta, [&](const Field& m) {
          return readString(c, m, m.number == 2 ? out.resourceVersion : out.continueToken);
        });
      }
      std::string_view item;
      KD_TRY(readBytes(c, f, item));
      api::Object obj;
      if (Status s = api::decodeObjectProto(kind, item, obj); !s.isOk()) {
        out.undecodable.push_back({undecodableKey(obj), s.message()});
        return Status::ok();
      }
      out.objects.push_back(std::move(obj));
      return Status::ok();
    });
  });
}

Status decodeWatchEventProto(api::Kind kind, std::string_view frame, WatchEvent& out) {
  return api::detail::guarded([&]() -> Status {
    out = WatchEvent{};
    FieldPath c;
    std::string_view type, object;
    bool haveType = false, haveObject = false;
    KD_TRY(forEachField(c, frame, kWatchEvent, [&](const Field& f) -> Status {
      if (f.number == 1) {
        haveType = true;
        return readBytes(c, f, type);
      }
      haveObject = true;
      return forEachField(c, f, kRawExtension, [&](const Field& r) { return readBytes(c, r, object); });
    }));
    if (!haveType) return Status::error("type: missing");
    if (!haveObject) return Status::error("object: missing");
    auto parsed = parseType(type);
    if (!parsed.isOk()) return parsed.status();
    out.type = *parsed;
    At at(c, "object");
    return decodeEventObject(kind, c, object, out);
  });
}

bool decodeStatusProto(std::string_view body, ApiError& e) {
  FieldPath c;
  Envelope env;
  if (!unwrap(c, body, env).isOk() || env.kind != "Status") return false;
  ApiError got;
  const Status s = forEachField(c, env.raw, kStatus, [&](const Field& f) -> Status {
    switch (f.number) {
      case 3: return readString(c, f, got.message);
      case 4: return readString(c, f, got.reason);
      case 5:
        return forEachField(c, f, kStatusDetails, [&](const Field& d) -> Status {
          if (d.number == 5) {
            // Always written; JSON leaves out a zero one (omitempty), which is no hint at all.
            std::int32_t seconds = 0;
            KD_TRY(readInt32(c, d, seconds));
            if (seconds != 0) got.retryAfter = std::chrono::seconds(seconds);
            return Status::ok();
          }
          StatusCause& cause = got.causes.emplace_back();
          return forEachField(c, d, kStatusCause, [&](const Field& x) {
            return readString(c, x, x.number == 1 ? cause.reason : x.number == 2 ? cause.message : cause.field);
          });
        });
      case 6: return readInt32(c, f, got.code);
      default: return Status::ok();
    }
  });
  if (!s.isOk()) return false;
  // As decodeStatusJson: a missing reason keeps the caller's (the HTTP phrase), a missing code 0.
  e.message = std::move(got.message);
  if (!got.reason.empty()) e.reason = std::move(got.reason);
  if (got.code != 0) e.code = got.code;
  e.causes = std::move(got.causes);
  if (got.retryAfter) e.retryAfter = got.retryAfter;
  return true;
}

}  // namespace kdesched::kube
