// Errors from the API server as values: the HTTP code, the Status reason and message the server
// sent, and what it asked of us (Retry-After). Callers decide on the code and reason (410 → relist,
// 429 with a DisruptionBudget cause → PDB-blocked, 404 on an eviction → already gone).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "pkg/kube/transport.h"

namespace kdesched::kube {

struct StatusCause {
  std::string reason;  // StatusCause.type, "reason" on the wire: "DisruptionBudget", "FieldValueInvalid"
  std::string message;
  std::string field;
};

struct ApiError {
  // The HTTP status, or the Status.code of a watch ERROR event. 0: no response arrived
  // (connection refused, TLS failure, timeout, cancelled) or the response could not be decoded.
  int code = 0;
  std::string reason;   // Status.reason ("Expired", "NotFound", "TooManyRequests"), else the HTTP phrase
  std::string message;  // Status.message, the transport's error, or the start of a non-Status body
  std::vector<StatusCause> causes;
  // The Retry-After header, else Status.details.retryAfterSeconds.
  std::optional<std::chrono::seconds> retryAfter;
  bool cancelled = false;  // the caller's Cancellation fired

  static ApiError transport(std::string message, bool cancelled = false) {
    ApiError e;
    e.message = std::move(message);
    e.cancelled = cancelled;
    return e;
  }

  // "410 Expired: too old resource version: 5 (10)", "no response: connection refused", or for an
  // undecodable body "InvalidResponse: items[3]: ...".
  std::string describe() const;
  // The resource version we asked for is gone from the server's history: only a relist helps.
  bool isGone() const { return code == 410; }
  bool hasCause(std::string_view causeReason) const;
};

// Builds the error for a non-2xx response: the body is decoded as a metav1.Status when it is one.
ApiError apiErrorFromResponse(int status, std::string_view httpReason, const Headers& headers, std::string_view body);
// Decodes a metav1.Status object (a watch ERROR event's object). Missing fields stay empty.
ApiError decodeStatusJson(std::string_view json);

// A value or an ApiError.
template <typename T>
class ApiResult {
 public:
  ApiResult(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  ApiResult(ApiError error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool isOk() const { return v_.index() == 0; }
  explicit operator bool() const { return isOk(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const ApiError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, ApiError> v_;
};

}  // namespace kdesched::kube
