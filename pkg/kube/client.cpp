#include "pkg/kube/client.h"

#include <algorithm>
#include <cctype>

#include "pkg/api/decode_proto.h"
#include "pkg/base/log.h"
#include "pkg/kube/wire_proto.h"

namespace kdesched::kube {

std::string encodeQueryValue(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char ch : value) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out.push_back(static_cast<char>(ch));
    } else {
      out.push_back('%');
      out.push_back(kHex[ch >> 4]);
      out.push_back(kHex[ch & 0xF]);
    }
  }
  return out;
}

namespace {

class Query {
 public:
  explicit Query(std::string_view path) : target_(path) {}
  Query& add(std::string_view key, std::string_view value) {
    target_ += first_ ? '?' : '&';
    first_ = false;
    target_ += key;
    target_ += '=';
    target_ += encodeQueryValue(value);
    return *this;
  }
  Query& addIf(bool cond, std::string_view key, std::string_view value) { return cond ? add(key, value) : *this; }
  std::string str() const { return target_; }

 private:
  std::string target_;
  bool first_ = true;
};

bool isSuccess(int status) { return status >= 200 && status < 300; }

bool isEviction(const std::string& target) {
  const std::string path = target.substr(0, target.find('?'));
  constexpr std::string_view kSuffix = "/eviction";
  return path.size() >= kSuffix.size() && path.compare(path.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

std::unique_ptr<TokenSource> makeTokenSource(const ClientConfig& config, const std::shared_ptr<Clock>& clock) {
  if (!config.tokenFile.empty()) return std::make_unique<CachedFileTokenSource>(config.tokenFile, clock);
  if (!config.bearerToken.empty()) return std::make_unique<StaticTokenSource>(config.bearerToken);
  return nullptr;
}

// Reads what a failed streaming response sent (a Status, usually small; in JSON or protobuf).
std::string drain(LineStream& lines) {
  constexpr std::size_t kMax = 64 * 1024;
  std::string body;
  lines.read(kMax, body);
  return body;
}

// The server no longer takes protobuf for the request: 406 Not Acceptable (it cannot answer in
// it) or 415 Unsupported Media Type.
bool refusesProtobuf(const ApiError& e) { return e.code == 406 || e.code == 415; }

}  // namespace

WatchStream::WatchStream(api::Kind kind, std::unique_ptr<LineStream> lines, std::unique_ptr<RequestDeadline> deadline,
                         bool protobuf)
    : kind_(kind), protobuf_(protobuf), deadline_(std::move(deadline)), lines_(std::move(lines)) {}

WatchStream::Next WatchStream::next(WatchEvent& out) { return protobuf_ ? nextFrame(out) : nextJson(out); }

WatchStream::Next WatchStream::ended() {
  const Status st = lines_->status();
  if (st.isOk()) return Next::Closed;
  problem_ = st.message();
  return Next::Broken;
}

WatchStream::Next WatchStream::nextFrame(WatchEvent& out) {
  if (!lines_->read(4, line_)) {
    bytes_ += line_.size();
    if (line_.empty()) return ended();
    problem_ = "the stream ended inside a frame's length";
    return Next::Broken;
  }
  bytes_ += 4;
  const auto* b = reinterpret_cast<const unsigned char*>(line_.data());
  const std::uint32_t length =
      (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | std::uint32_t{b[3]};
  if (length > kMaxWatchFrame) {
    problem_ = "a watch frame of " + std::to_string(length) + " bytes, over the " + std::to_string(kMaxWatchFrame) +
               " accepted: the stream is corrupt";
    return Next::Malformed;
  }
  const bool whole = lines_->read(length, line_);
  bytes_ += line_.size();
  if (!whole) {
    const Status st = lines_->status();
    problem_ = "the stream ended inside a frame (" + std::to_string(line_.size()) + " of " + std::to_string(length) +
               " bytes)" + (st.isOk() ? std::string() : ": " + st.message());
    return Next::Broken;
  }
  if (Status s = decodeWatchEventProto(kind_, line_, out); !s.isOk()) {
    problem_ = s.message() + " (protobuf frame of " + std::to_string(length) + " bytes)";
    return Next::Malformed;
  }
  return Next::Event;
}

WatchStream::Next WatchStream::nextJson(WatchEvent& out) {
  for (;;) {
    if (!lines_->next(line_)) return ended();
    bytes_ += line_.size() + 1;
    if (line_.find_first_not_of(" \t\r") == std::string::npos) continue;  // keep-alive blank lines
    if (Status s = decodeWatchEvent(kind_, line_, parser_, out); !s.isOk()) {
      problem_ =
          s.message() + " (line of " + std::to_string(line_.size()) + " bytes starting " + line_.substr(0, 80) + ")";
      return Next::Malformed;
    }
    return Next::Event;
  }
}

Client::Client(ClientConfig config, std::unique_ptr<Transport> transport, std::shared_ptr<Clock> clock)
    : config_(std::move(config)),
      transport_(std::move(transport)),
      clock_(std::move(clock)),
      tokens_(makeTokenSource(config_, clock_)),
      limiter_(config_.qps, config_.burst, clock_) {}

std::unique_ptr<RequestDeadline> Client::deadlineFor(Cancellation* parent) const {
  if (config_.requestTimeout <= std::chrono::milliseconds::zero()) return nullptr;
  return std::make_unique<RequestDeadline>(parent, config_.requestTimeout, clock_);
}

std::chrono::seconds Client::transportTimeout() const {
  return std::chrono::ceil<std::chrono::seconds>(config_.requestTimeout) + std::chrono::seconds(5);
}

Status Client::decorate(HttpRequest& request, std::string_view accept) {
  request.headers.emplace_back("Accept", accept.empty() ? std::string(kJsonMediaType) : std::string(accept));
  request.headers.emplace_back("User-Agent", config_.userAgent);
  if (tokens_) {
    auto token = tokens_->token();
    if (!token.isOk()) return token.status();
    if (!token->empty()) request.headers.emplace_back("Authorization", "Bearer " + *token);
  }
  return Status::ok();
}

// One line per request at trace level (-v 6 and up), as client-go's round-trip log: the method,
// the target and the answer, never a header (the Authorization header carries the token).
void Client::trace(const HttpRequest& request, const Result<HttpResponse>& response, Clock::TimePoint sentAt) const {
  if (!log::enabled(log::Level::Trace)) return;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock_->now() - sentAt).count();
  if (response.isOk()) {
    log::trace("kube request",
               {{"method", request.method}, {"target", request.target}, {"code", response->status}, {"ms", ms}});
  } else {
    log::trace("kube request",
               {{"method", request.method}, {"target", request.target}, {"error", response.error()}, {"ms", ms}});
  }
}

ApiResult<HttpResponse> Client::execute(HttpRequest request, const RequestOptions& options) {
  request.cancel = options.cancel;
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" || request.method == "PATCH") {
    std::string type = options.contentType;
    if (type.empty()) type = request.method == "PATCH" ? "application/merge-patch+json" : "application/json";
    request.headers.emplace_back("Content-Type", type);
  }
  const bool retryThrottled = options.retryThrottled && !isEviction(request.target);
  const Headers base = request.headers;
  bool refreshedToken = false;
  int throttled = 0;
  for (;;) {
    TokenBucket& bucket = options.limiter ? *options.limiter : limiter_;
    if (!bucket.acquire(options.cancel)) return ApiError::transport("waiting for the client rate limiter", true);
    HttpRequest attempt = request;
    attempt.headers = base;
    if (Status s = decorate(attempt, options.accept); !s.isOk())
      return ApiError::transport("credentials: " + s.message());
    std::unique_ptr<RequestDeadline> deadline = deadlineFor(options.cancel);
    if (deadline) {
      attempt.cancel = deadline->get();
      // The transport's own timer only as a backstop: ours counts the whole request and says so.
      attempt.timeout = transportTimeout();
    }
    const Clock::TimePoint sentAt = clock_->now();
    auto response = transport_->send(attempt);
    trace(request, response, sentAt);
    if (!response.isOk()) {
      const bool cancelled = options.cancel && options.cancel->cancelled();
      const std::string what = request.method + " " + request.target + ": ";
      return ApiError::transport(deadline ? deadline->explain(what + response.error()) : what + response.error(),
                                 cancelled);
    }
    deadline.reset();
    if (isSuccess(response->status)) return std::move(response).value();

    ApiError err = apiErrorFromResponse(response->status, response->reason, response->headers, response->body);
    if (err.code == 401 && tokens_ && !refreshedToken) {
      // A rotated token: read the file again and try once more.
      refreshedToken = true;
      tokens_->reset();
      log::info("kube request unauthorized, re-reading the token",
                {{"method", request.method}, {"target", request.target}});
      continue;
    }
    const bool throttledCode = err.code == 429 || err.code == 503;
    const bool headerRetryAfter = !response->header("Retry-After").empty() && err.retryAfter;
    if (throttledCode && retryThrottled && headerRetryAfter && throttled < kMaxThrottleRetries &&
        *err.retryAfter <= kMaxRetryAfter) {
      ++throttled;
      // At least a second: a zero Retry-After repeated would be the retry storm APF warns about.
      const auto wait = std::max<std::chrono::seconds>(*err.retryAfter, std::chrono::seconds(1));
      log::warn("kube request throttled", {{"method", request.method},
                                           {"target", request.target},
                                           {"code", err.code},
                                           {"retry_after_s", wait.count()},
                                           {"attempt", throttled},
                                           {"flow_schema", response->header("X-Kubernetes-PF-FlowSchema-UID")},
                                           {"priority_level", response->header("X-Kubernetes-PF-PriorityLevel-UID")}});
      if (!clock_->sleepFor(wait, options.cancel)) return ApiError::transport("waiting out Retry-After", true);
      continue;
    }
    return err;
  }
}

ApiResult<HttpResponse> Client::get(const std::string& target, const RequestOptions& options) {
  HttpRequest r;
  r.method = "GET";
  r.target = target;
  return execute(std::move(r), options);
}

ApiResult<HttpResponse> Client::post(const std::string& target, std::string body, const RequestOptions& options) {
  HttpRequest r;
  r.method = "POST";
  r.target = target;
  r.body = std::move(body);
  return execute(std::move(r), options);
}

ApiResult<HttpResponse> Client::put(const std::string& target, std::string body, const RequestOptions& options) {
  HttpRequest r;
  r.method = "PUT";
  r.target = target;
  r.body = std::move(body);
  return execute(std::move(r), options);
}

ApiResult<HttpResponse> Client::patch(const std::string& target, std::string body, const RequestOptions& options) {
  HttpRequest r;
  r.method = "PATCH";
  r.target = target;
  r.body = std::move(body);
  return execute(std::move(r), options);
}

ApiResult<HttpResponse> Client::del(const std::string& target, std::string body, const RequestOptions& options) {
  HttpRequest r;
  r.method = "DELETE";
  r.target = target;
  r.body = std::move(body);
  return execute(std::move(r), options);
}

ApiResult<PagedList> Client::listPages(std::string_view path, std::string_view name, const ListOptions& options,
                                       const PageReader& pages, Cancellation* cancel) {
  return pagedList(
      path, name, options, {},
      [&](std::string& body, std::string_view, std::string& next) { return pages.decode(body, next); }, pages.restart,
      cancel);
}

ApiResult<PagedList> Client::pagedList(std::string_view path, std::string_view name, const ListOptions& options,
                                       const std::string& accept, const TypedPageDecoder& decode,
                                       const std::function<void()>& restart, Cancellation* cancel) {
  PagedList result;
  std::string continueToken;
  RequestOptions ro;
  ro.cancel = cancel;
  ro.accept = accept;
  for (;;) {
    // With a continue token the server rejects resourceVersion: the token pins the snapshot.
    std::string target = Query(path)
                             .addIf(options.limit > 0, "limit", std::to_string(options.limit))
                             .addIf(continueToken.empty() && !options.resourceVersion.empty(), "resourceVersion",
                                    options.resourceVersion)
                             .addIf(!continueToken.empty(), "continue", continueToken)
                             .addIf(!options.labelSelector.empty(), "labelSelector", options.labelSelector)
                             .addIf(!options.fieldSelector.empty(), "fieldSelector", options.fieldSelector)
                             .str();
    auto response = get(target, ro);
    if (!response.isOk()) {
      if (response.error().isGone() && !continueToken.empty() && result.restarts < kMaxListRestarts) {
        // The snapshot the token pinned was compacted away while we paged; start over.
        ++result.restarts;
        log::info("kube list continue token expired, restarting",
                  {{"resource", name}, {"pages_read", result.pages}, {"restart", result.restarts}});
        if (restart) restart();
        result.pages = 0;
        continueToken.clear();
        continue;
      }
      return response.error();
    }
    continueToken.clear();
    if (Status s = decode(response->body, response->header("Content-Type"), continueToken); !s.isOk()) {
      ApiError e;
      e.reason = "InvalidResponse";
      e.message = std::string(name) + " list page " + std::to_string(result.pages + 1) + ": " + s.message();
      return e;
    }
    ++result.pages;
    if (continueToken.empty()) break;
  }
  return result;
}

bool Client::asksProtobuf(api::Kind kind) const {
  return config_.protobuf && api::decodesProto(kind) && !protobufRefused_.load();
}

bool Client::fallBackToJson(const ApiError& error, const Resource& resource) {
  if (!refusesProtobuf(error)) return false;
  if (!protobufRefused_.exchange(true)) {
    log::info("the API server refused protobuf; asking for JSON from now on",
              {{"resource", resource.name}, {"error", error.describe()}});
  }
  return true;
}

ApiResult<ListResult> Client::list(const Resource& resource, const ListOptions& options, Cancellation* cancel) {
  const bool protobuf = asksProtobuf(resource.kind);
  auto listed = listAs(resource, options, protobuf, cancel);
  if (!listed.isOk() && protobuf && fallBackToJson(listed.error(), resource))
    return listAs(resource, options, false, cancel);
  return listed;
}

ApiResult<ListResult> Client::listAs(const Resource& resource, const ListOptions& options, bool protobuf,
                                     Cancellation* cancel) {
  ListPage page;
  std::size_t bytes = 0;
  bool answeredProtobuf = false;
  auto decode = [&](std::string& body, std::string_view contentType, std::string& continueToken) {
    page.continueToken.clear();
    bytes += body.size();
    // By what the server sent, not what was asked: a server may answer JSON to either.
    answeredProtobuf = isProtobufContentType(contentType);
    KD_TRY(answeredProtobuf ? decodeListPageProto(resource.kind, body, page)
                            : decodeListPage(resource.kind, body, page));
    continueToken = page.continueToken;
    return Status::ok();
  };
  auto restart = [&] {
    page = ListPage{};
    bytes = 0;
  };
  auto paged = pagedList(resource.path, resource.name, options, protobuf ? std::string(kAcceptProtobuf) : std::string(),
                         decode, restart, cancel);
  if (!paged.isOk()) return paged.error();
  ListResult result;
  result.pages = paged->pages;
  result.restarts = paged->restarts;
  result.bytes = bytes;
  result.protobuf = answeredProtobuf;
  result.objects = std::move(page.objects);
  result.undecodable = std::move(page.undecodable);
  result.resourceVersion = std::move(page.resourceVersion);
  return result;
}

ApiResult<std::unique_ptr<WatchStream>> Client::watch(const Resource& resource, const WatchOptions& options,
                                                      Cancellation* cancel) {
  const bool protobuf = asksProtobuf(resource.kind);
  auto opened = watchAs(resource, options, protobuf, cancel);
  if (!opened.isOk() && protobuf && fallBackToJson(opened.error(), resource))
    return watchAs(resource, options, false, cancel);
  return opened;
}

ApiResult<std::unique_ptr<WatchStream>> Client::watchAs(const Resource& resource, const WatchOptions& options,
                                                        bool protobuf, Cancellation* cancel) {
  HttpRequest request;
  request.method = "GET";
  request.target = Query(resource.path)
                       .add("watch", "true")
                       .addIf(options.allowBookmarks, "allowWatchBookmarks", "true")
                       .addIf(options.sendInitialEvents, "sendInitialEvents", "true")
                       .addIf(options.sendInitialEvents, "resourceVersionMatch", "NotOlderThan")
                       // Omitted when empty, as client-go sends it: the newest state.
                       .addIf(!options.resourceVersion.empty(), "resourceVersion", options.resourceVersion)
                       .add("timeoutSeconds", std::to_string(options.timeout.count()))
                       .addIf(!options.labelSelector.empty(), "labelSelector", options.labelSelector)
                       .addIf(!options.fieldSelector.empty(), "fieldSelector", options.fieldSelector)
                       .str();
  // cpprestsdk's timeout is an inactivity timer: it must outlast a quiet watch, which the server
  // ends itself after timeoutSeconds.
  request.timeout = options.timeout + std::chrono::seconds(60);
  request.cancel = cancel;
  bool refreshedToken = false;
  for (;;) {
    if (!limiter_.acquire(cancel)) return ApiError::transport("waiting for the client rate limiter", true);
    HttpRequest attempt = request;
    if (Status s = decorate(attempt, protobuf ? kAcceptProtobuf : kJsonMediaType); !s.isOk())
      return ApiError::transport("credentials: " + s.message());
    std::unique_ptr<RequestDeadline> deadline = deadlineFor(cancel);
    if (deadline) attempt.cancel = deadline->get();
    auto opened = transport_->openWatch(attempt);
    if (!opened.isOk()) {
      const std::string what = "watch " + std::string(resource.name) + ": " + opened.error();
      return ApiError::transport(deadline ? deadline->explain(what) : what, cancel && cancel->cancelled());
    }
    if (isSuccess(opened->status)) {
      if (deadline) deadline->disarm();
      // Framed by what the server sent ("application/vnd.kubernetes.protobuf;stream=watch"), not
      // by what was asked.
      return std::make_unique<WatchStream>(resource.kind, std::move(opened->lines), std::move(deadline),
                                           isProtobufContentType(findHeader(opened->headers, "Content-Type")));
    }
    const std::string body = opened->lines ? drain(*opened->lines) : std::string();
    ApiError err = apiErrorFromResponse(opened->status, opened->reason, opened->headers, body);
    if (err.code == 401 && tokens_ && !refreshedToken) {
      refreshedToken = true;
      tokens_->reset();
      continue;
    }
    return err;
  }
}

}  // namespace kdesched::kube
