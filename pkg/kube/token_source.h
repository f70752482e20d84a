// Bearer tokens. Projected service-account tokens expire (the kubelet rewrites the file at 80% of
// their lifetime), so a token read once at startup stops working after about an hour: client-go
// re-reads the file at least every minute and drops its cache after a 401. So do we.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "pkg/base/clock.h"
#include "pkg/base/status.h"

namespace kdesched::kube {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // The token to send; empty means no Authorization header.
  virtual Result<std::string> token() = 0;
  // Forget any cached token (the server said 401); the next token() reads afresh.
  virtual void reset() = 0;
};

class StaticTokenSource final : public TokenSource {
 public:
  explicit StaticTokenSource(std::string token) : token_(std::move(token)) {}
  Result<std::string> token() override { return token_; }
  void reset() override {}

 private:
  std::string token_;
};

class CachedFileTokenSource final : public TokenSource {
 public:
  CachedFileTokenSource(std::string path, std::shared_ptr<Clock> clock,
                        Clock::Duration period = std::chrono::minutes(1));
  // Re-reads the file when the cached copy is older than the period. When a re-read fails but an
  // earlier token exists, the earlier one is kept (a rotation in progress must not stop us).
  Result<std::string> token() override;
  void reset() override;

 private:
  std::string path_;
  std::shared_ptr<Clock> clock_;
  Clock::Duration period_;
  std::mutex mu_;
  std::optional<std::string> cached_;
  Clock::TimePoint readAt_{};
};

// Reads a token file, trimming surrounding whitespace (the file usually ends with a newline).
// More than kMaxCredentialFileBytes is an error: no token is that long.
Result<std::string> readTokenFile(const std::string& path);

// Kubeconfigs, CA bundles, client certificates, keys and tokens are a few KiB; a path that names
// /dev/zero, a log file or a disk must fail with a clear error, not read until memory runs out.
inline constexpr std::size_t kMaxCredentialFileBytes = std::size_t{16} << 20;

// Reads a whole file in chunks (it may be a pipe, e.g. --kubeconfig <(...)), refusing more than
// maxBytes. The error is the reason alone ("No such file or directory", "larger than 16 MiB; ..."):
// the caller names the file and what it is for.
Result<std::string> readBoundedFile(const std::string& path, std::size_t maxBytes = kMaxCredentialFileBytes);

}  // namespace kdesched::kube
