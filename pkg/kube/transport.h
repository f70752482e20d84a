// The HTTP edge of the API client. Everything above it (auth headers, rate limiting, retries, LIST
// paging, WATCH decoding, the reflector) is plain code that tests drive with a scripted in-memory
// transport; only cpprest_transport.cpp talks to sockets.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/base/clock.h"
#include "pkg/base/status.h"

namespace kdesched::kube {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive header lookup; "" when absent.
std::string findHeader(const Headers& headers, std::string_view name);

struct HttpRequest {
  std::string method = "GET";
  std::string target;  // path and query, already percent-encoded: "/api/v1/pods?limit=500"
  Headers headers;
  std::string body;
  // An inactivity timeout (cpprestsdk resets it on every chunk received). A watch's must exceed
  // its timeoutSeconds, or a quiet watch is cut by the client before the server ends it.
  std::chrono::seconds timeout{60};
  // Aborts the request, including a watch's open stream. Not owned; must outlive the call.
  Cancellation* cancel = nullptr;
};

struct HttpResponse {
  int status = 0;
  std::string reason;  // the HTTP reason phrase
  Headers headers;
  std::string body;

  std::string header(std::string_view name) const { return findHeader(headers, name); }
};

// The body of a streaming response: one newline-terminated line at a time (a JSON watch), or so
// many bytes at a time (the length-framed protobuf watch). A stream is read one way only.
class LineStream {
 public:
  virtual ~LineStream() = default;
  // Blocks for the next line (without its "\n" or "\r\n"). False at the end of the stream; then
  // status() tells a clean end (ok) from a broken connection, a timeout or a cancel.
  virtual bool next(std::string& line) = 0;
  // Blocks for the next `n` bytes. False when the stream ends first: `out` then holds what came
  // (nothing at a clean end between frames), and status() tells how it ended.
  virtual bool read(std::size_t n, std::string& out) = 0;
  // Unblocks next() from another thread; the stream then ends with an error status.
  virtual void cancel() = 0;
  virtual Status status() const = 0;
};

// Response headers arrive before the body; a streaming body is read through `lines`.
struct StreamResponse {
  int status = 0;
  std::string reason;
  Headers headers;
  std::unique_ptr<LineStream> lines;
};

// Implementations are thread-safe: several reflectors and the evictor share one.
class Transport {
 public:
  virtual ~Transport() = default;
  // A request whose whole response body is read. An error means no HTTP response arrived
  // (connection refused, TLS failure, timeout, cancelled); HTTP error codes are responses.
  virtual Result<HttpResponse> send(const HttpRequest& request) = 0;
  // A request whose response body is streamed (a WATCH). Returns once the headers arrived.
  virtual Result<StreamResponse> openWatch(const HttpRequest& request) = 0;
};

}  // namespace kdesched::kube
