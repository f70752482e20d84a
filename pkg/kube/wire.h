// Decoding LIST pages and WATCH events straight into the compact model (simdjson on-demand; no
// JSON DOM of a page is ever built). An object is only handed out once it decoded completely.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/decode.h"
#include "pkg/base/clock.h"
#include "pkg/kube/api_error.h"

namespace kdesched::kube {

// An object the API server sent that kdesched cannot decode (a field it reads holds a value it
// does not understand): left out, never half-used. What that means for the cache is the
// reflector's call (reflector.h).
struct UndecodableObject {
  std::string key;    // its store key (cluster::objectKey) as far as its metadata decoded; "" if not
  std::string error;  // from the field on: `spec.containers[0].resources.requests.cpu: invalid quantity "1x"`
};

// The store key of an object whose decoding stopped part way, if its name (and namespace, for the
// namespaced kinds) were read before it stopped; "" otherwise.
std::string undecodableKey(const api::Object& obj);

struct ListPage {
  std::vector<api::Object> objects;
  std::vector<UndecodableObject> undecodable;  // items left out of `objects`
  std::string resourceVersion;                 // metadata.resourceVersion of the list
  std::string continueToken;                   // metadata.continue; empty on the last page
};

// Appends the page's items to out.objects, and those that do not decode to out.undecodable (one
// such item no longer fails the page: the cache would never sync). `body` may be reallocated to
// add simdjson's padding. Errors are for a page that is not a LIST at all or not JSON.
Status decodeListPage(api::Kind kind, std::string& body, ListPage& out);

enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };
std::string_view toString(WatchEventType t);

struct WatchEvent {
  WatchEventType type = WatchEventType::Added;
  std::string resourceVersion;  // the object's metadata.resourceVersion; empty for Error
  api::Object object;           // Added, Modified, Deleted (a Deleted object's last state)
  // Set instead of `object` when the event is well-formed but its object does not decode.
  std::optional<UndecodableObject> undecodable;
  ApiError error;  // Error: the Status the server sent (code 410: relist)
  // Bookmark: annotated k8s.io/initial-events-end: "true", the end of a watch-list's initial state.
  bool initialEventsEnd = false;
};

// The annotation of the bookmark that ends a watch-list's initial events (metav1.InitialEventsAnnotationKey).
inline constexpr std::string_view kInitialEventsEndAnnotation = "k8s.io/initial-events-end";

// Decodes one line of a JSON watch stream: {"type":"ADDED","object":{...}}. `line` may be
// reallocated for padding; `parser` is reused across lines (it keeps its buffers).
Status decodeWatchEvent(api::Kind kind, std::string& line, api::JsonParser& parser, WatchEvent& out);

// "2026-01-02T03:04:05Z", or with microseconds "2026-01-02T03:04:05.123456Z" (metav1.MicroTime),
// as timestamps are written to the API server.
std::string rfc3339(Clock::WallTime t, bool micros);

}  // namespace kdesched::kube
