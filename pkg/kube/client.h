// The API client: REST verbs with auth, a client-side rate limit, bounded Retry-After handling and
// 401 token refresh; paginated LIST and WATCH decoded straight into api::Objects.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "pkg/base/clock.h"
#include "pkg/kube/api_error.h"
#include "pkg/kube/config.h"
#include "pkg/kube/deadline.h"
#include "pkg/kube/rate_limiter.h"
#include "pkg/kube/resources.h"
#include "pkg/kube/token_source.h"
#include "pkg/kube/transport.h"
#include "pkg/kube/wire.h"

namespace kdesched::kube {

struct RequestOptions {
  // Empty: application/json, or application/merge-patch+json for PATCH.
  std::string contentType;
  // The Accept header; empty: application/json.
  std::string accept;
  // Retry a 429 (or 503) that carries Retry-After, up to Client::kMaxThrottleRetries times. The
  // eviction subresource is never retried whatever this says: a 429 there usually means a PDB
  // has no budget, and whether to try again is the evictor's decision.
  bool retryThrottled = true;
  Cancellation* cancel = nullptr;
  // The token bucket this request waits on; null: the client's shared one. Events have their own,
  // so recording them never delays an eviction or a relist.
  TokenBucket* limiter = nullptr;
};

struct ListOptions {
  // "": the newest state (a quorum read); "0": any state, served from the API server's cache;
  // anything else: not older than that version.
  std::string resourceVersion;
  std::int64_t limit = 500;  // page size; 0 asks for everything in one response
  std::string labelSelector;
  std::string fieldSelector;
};

struct ListResult {
  std::vector<api::Object> objects;
  std::vector<UndecodableObject> undecodable;  // items left out of `objects` (wire.h)
  std::string resourceVersion;                 // watch from here
  int pages = 0;
  int restarts = 0;       // times an expired continue token made us start over
  std::size_t bytes = 0;  // of the pages' bodies, as received
  bool protobuf = false;  // the server answered in protobuf
};

// Reads the pages of a LIST whose items the caller decodes itself (Client::listPages).
struct PageReader {
  // Decodes one page (`body` may be reallocated for padding) and sets `continueToken` from its
  // metadata.continue ("" on the last page). An error fails the list.
  std::function<Status(std::string& body, std::string& continueToken)> decode;
  // The list starts over from its first page: forget what the pages so far gave.
  std::function<void()> restart;
};

struct PagedList {
  int pages = 0;
  int restarts = 0;
};

struct WatchOptions {
  std::string resourceVersion;
  std::chrono::seconds timeout{300};  // the server ends the watch after this (timeoutSeconds)
  bool allowBookmarks = true;
  // A watch-list (KEP-3157, "streaming lists"): the server first sends the current state as ADDED
  // events, not older than `resourceVersion` ("": the newest, a consistent read), then a BOOKMARK
  // annotated k8s.io/initial-events-end, then the changes. Adds sendInitialEvents=true and
  // resourceVersionMatch=NotOlderThan (the API server requires both, and bookmarks allowed).
  bool sendInitialEvents = false;
  std::string labelSelector;
  std::string fieldSelector;
};

// An open watch. Not thread-safe except cancel().
class WatchStream {
 public:
  enum class Next {
    Event,      // `out` holds a fully decoded event
    Closed,     // the server ended the watch normally (timeoutSeconds elapsed)
    Broken,     // the connection failed, timed out or was cancelled: problem() says which
    Malformed,  // a line did not decode: problem() says where; nothing of it was applied
  };

  // `deadline` (may be null) is the one the watch was opened under, disarmed: the stream's
  // cancellation still runs through it, so it lives as long as the stream.
  // `protobuf`: the body is length-framed protobuf events (wire_proto.h), else JSON lines.
  WatchStream(api::Kind kind, std::unique_ptr<LineStream> lines, std::unique_ptr<RequestDeadline> deadline = nullptr,
              bool protobuf = false);
  Next next(WatchEvent& out);
  void cancel() { lines_->cancel(); }
  const std::string& problem() const { return problem_; }
  bool protobuf() const { return protobuf_; }
  // The body's bytes read so far (framing included).
  std::size_t bytes() const { return bytes_; }

 private:
  Next nextJson(WatchEvent& out);
  Next nextFrame(WatchEvent& out);
  Next ended();

  api::Kind kind_;
  bool protobuf_;
  std::size_t bytes_ = 0;
  std::unique_ptr<RequestDeadline> deadline_;  // declared first: destroyed after the stream using it
  std::unique_ptr<LineStream> lines_;
  api::JsonParser parser_;
  std::string line_;
  std::string problem_;
};

// Thread-safe; one per process, shared by the reflectors and the evictor.
class Client {
 public:
  static constexpr int kMaxThrottleRetries = 5;
  // A Retry-After longer than this is returned to the caller instead of slept through.
  static constexpr std::chrono::seconds kMaxRetryAfter{60};
  static constexpr int kMaxListRestarts = 2;

  Client(ClientConfig config, std::unique_ptr<Transport> transport, std::shared_ptr<Clock> clock);

  // `target` is a path with an optional, already-encoded query ("/api/v1/namespaces/x/pods/y").
  // 2xx → the response; anything else → an ApiError with the server's Status.
  // The shared bucket's rate, for callers that size their own bucket like it.
  double qps() const { return limiter_.qps(); }
  int burst() const { return limiter_.burst(); }

  ApiResult<HttpResponse> get(const std::string& target, const RequestOptions& options = {});
  ApiResult<HttpResponse> post(const std::string& target, std::string body, const RequestOptions& options = {});
  ApiResult<HttpResponse> put(const std::string& target, std::string body, const RequestOptions& options = {});
  ApiResult<HttpResponse> patch(const std::string& target, std::string body, const RequestOptions& options = {});
  ApiResult<HttpResponse> del(const std::string& target, std::string body = "", const RequestOptions& options = {});

  // All pages of a collection. An expired continue token (410) restarts the list from the first
  // page, at most kMaxListRestarts times.
  ApiResult<ListResult> list(const Resource& resource, const ListOptions& options, Cancellation* cancel = nullptr);

  // The same paging for a collection the cache does not hold (metrics.k8s.io): each page's body is
  // handed to `pages.decode`, which reads it into the caller's own model and sets the page's
  // metadata.continue; `pages.restart` drops what the earlier pages gave when the list starts
  // over. `name` names the collection in errors ("nodemetrics").
  ApiResult<PagedList> listPages(std::string_view path, std::string_view name, const ListOptions& options,
                                 const PageReader& pages, Cancellation* cancel = nullptr);

  // Opens a watch; returns once the server accepted it. Not retried on 429: the reflector backs off.
  // Opening is bounded by the request timeout; the open stream only by the server's
  // timeoutSeconds and, should the server fall silent, the transport's inactivity timer set a
  // minute beyond that.
  ApiResult<std::unique_ptr<WatchStream>> watch(const Resource& resource, const WatchOptions& options,
                                                Cancellation* cancel = nullptr);

  // The API server refused a watch-list (its WatchList feature gate is off, or it predates it): the
  // gate is server-wide, so every reflector of the process lists in pages from then on.
  bool watchListRefused() const { return watchListRefused_.load(); }
  // Records that refusal; true for the first caller only (who logs it at info level).
  bool noteWatchListRefused() { return !watchListRefused_.exchange(true); }

 private:
  // Whether a request for `kind` asks for protobuf: configured, decodable, not refused before.
  bool asksProtobuf(api::Kind kind) const;
  // A 406/415 to a protobuf request: JSON from then on, for every resource (said once, at info).
  bool fallBackToJson(const ApiError& error, const Resource& resource);
  ApiResult<ListResult> listAs(const Resource& resource, const ListOptions& options, bool protobuf,
                               Cancellation* cancel);
  ApiResult<std::unique_ptr<WatchStream>> watchAs(const Resource& resource, const WatchOptions& options, bool protobuf,
                                                  Cancellation* cancel);
  // listPages with the Accept header to send; `decode` also gets each page's Content-Type.
  using TypedPageDecoder = std::function<Status(std::string& body, std::string_view contentType, std::string& next)>;
  ApiResult<PagedList> pagedList(std::string_view path, std::string_view name, const ListOptions& options,
                                 const std::string& accept, const TypedPageDecoder& decode,
                                 const std::function<void()>& restart, Cancellation* cancel);

  ApiResult<HttpResponse> execute(HttpRequest request, const RequestOptions& options);
  // A time limit for one attempt, under `parent`; null without a request timeout.
  std::unique_ptr<RequestDeadline> deadlineFor(Cancellation* parent) const;
  // The HTTP client's inactivity timer under a request timeout: a little longer, so the request
  // timeout (which counts the whole request and names itself in the error) speaks first.
  std::chrono::seconds transportTimeout() const;
  // Adds auth, user agent and accept headers (`accept` empty: application/json); an error when the
  // token cannot be read.
  Status decorate(HttpRequest& request, std::string_view accept = {});
  void trace(const HttpRequest& request, const Result<HttpResponse>& response, Clock::TimePoint sentAt) const;

  ClientConfig config_;
  std::unique_ptr<Transport> transport_;
  std::shared_ptr<Clock> clock_;
  std::unique_ptr<TokenSource> tokens_;  // null: no Authorization header
  TokenBucket limiter_;
  std::atomic<bool> watchListRefused_{false};
  std::atomic<bool> protobufRefused_{false};
};

// Percent-encodes a query parameter value (RFC 3986 unreserved characters pass through).
std::string encodeQueryValue(std::string_view value);

}  // namespace kdesched::kube
