// Decoding LIST pages and WATCH events straight into the compact model (simdjson on-demand; no
// JSON DOM of a page is ever built). An object is only handed out once it decoded completely.
#pragma once

#include <string>
#include <vector>

#include "pkg/api/decode.h"
#include "pkg/base/clock.h"
#include "pkg/kube/api_error.h"

namespace kdesched::kube {

struct ListPage {
  std::vector<api::Object> objects;
  std::string resourceVersion;  // metadata.resourceVersion of the list
  std::string continueToken;    // metadata.continue; empty on the last page
};

// Appends the page's items to out.objects. `body` may be reallocated to add simdjson's padding.
// Errors name the item: `items[3] (default/web-1): spec.containers[0]...: invalid quantity "1x"`.
Status decodeListPage(api::Kind kind, std::string& body, ListPage& out);

enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };
std::string_view toString(WatchEventType t);

struct WatchEvent {
  WatchEventType type = WatchEventType::Added;
  std::string resourceVersion;  // the object's metadata.resourceVersion; empty for Error
  api::Object object;           // Added, Modified, Deleted (a Deleted object's last state)
  ApiError error;               // Error: the Status the server sent (code 410: relist)
};

// Decodes one line of a JSON watch stream: {"type":"ADDED","object":{...}}. `line` may be
// reallocated for padding; `parser` is reused across lines (it keeps its buffers).
Status decodeWatchEvent(api::Kind kind, std::string& line, api::JsonParser& parser, WatchEvent& out);

// "2026-01-02T03:04:05Z", or with microseconds "2026-01-02T03:04:05.123456Z" (metav1.MicroTime),
// as timestamps are written to the API server.
std::string rfc3339(Clock::WallTime t, bool micros);

}  // namespace kdesched::kube
