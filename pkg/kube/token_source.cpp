#include "pkg/kube/token_source.h"

#include <fstream>
#include <sstream>

namespace kdesched::kube {

Result<std::string> readTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error("cannot read the token file " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string token = buf.str();
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
