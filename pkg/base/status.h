// Errors as values across module edges: Status for "did it work", Result<T> for "value or error",
// KD_TRY to pass a failure up.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace kdesched {

class Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message)); }

  bool isOk() const { return !failed_; }
  explicit operator bool() const { return isOk(); }
  const std::string& message() const { return message_; }

  // Prefixes the message with context, e.g. a file name or a field path: "ctx: message".
  Status& prefix(const std::string& ctx) {
    if (failed_) message_ = ctx + ": " + message_;
    return *this;
  }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status error) : v_(std::move(error)) { assert(!std::get<Status>(v_).isOk()); }  // NOLINT

  bool isOk() const { return v_.index() == 0; }
  explicit operator bool() const { return isOk(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Status& status() const {
    static const Status kOk;
    return isOk() ? kOk : std::get<Status>(v_);
  }
  const std::string& error() const { return std::get<Status>(v_).message(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace kdesched

// Returns a failed Status (or anything convertible to one) from the enclosing function.
#define KD_TRY(expr)                                                                               \
  do {                                                                                             \
    if (::kdesched::Status kd_try_status_ = (expr); !kd_try_status_.isOk()) return kd_try_status_; \
  } while (0)
