#include "pkg/kube/token_source.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kdesched::kube {

Result<std::string> readBoundedFile(const std::string& path, std::size_t maxBytes) {
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return Status::error(std::strerror(errno ? errno : ENOENT));
  std::string text;
  char chunk[64 * 1024];
  while (std::size_t n = std::fread(chunk, 1, sizeof chunk, file.get())) {
    if (text.size() + n > maxBytes) {
      const bool mib = maxBytes >= (std::size_t{1} << 20) && maxBytes % (std::size_t{1} << 20) == 0;
      return Status::error("larger than " + std::to_string(mib ? maxBytes >> 20 : maxBytes) +
                           (mib ? " MiB" : " bytes") + "; is this the right file?");
    }
    text.append(chunk, n);
  }
  if (std::ferror(file.get())) return Status::error(std::strerror(errno ? errno : EIO));
  return text;
}

Result<std::string> readTokenFile(const std::string& path) {
  auto text = readBoundedFile(path);
  if (!text.isOk()) return Status::error("cannot read the token file " + path + ": " + text.error());
  std::string token = std::move(*text);
  constexpr std::string_view kSpace = " \t\r\n";
  const auto b = token.find_first_not_of(kSpace);
  if (b == std::string::npos) return Status::error("the token file " + path + " is empty");
  token = token.substr(b, token.find_last_not_of(kSpace) - b + 1);
  return token;
}

CachedFileTokenSource::CachedFileTokenSource(std::string path, std::shared_ptr<Clock> clock, Clock::Duration period)
    : path_(std::move(path)), clock_(std::move(clock)), period_(period) {}

Result<std::string> CachedFileTokenSource::token() {
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::TimePoint now = clock_->now();
  if (cached_ && now - readAt_ < period_) return *cached_;
  auto fresh = readTokenFile(path_);
  if (!fresh.isOk()) {
    if (cached_) return *cached_;
    return fresh.status();
  }
  cached_ = std::move(fresh).value();
  readAt_ = now;
  return *cached_;
}

void CachedFileTokenSource::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  // Keep the value as a fallback for an unreadable file, but force a re-read.
  readAt_ = Clock::TimePoint{};
  if (cached_) readAt_ = clock_->now() - period_;
}

}  // namespace kdesched::kube
