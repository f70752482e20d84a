#include "pkg/api/uid.h"

#include <cstring>
#include <functional>

namespace kdesched::api {

namespace {

constexpr std::array<std::size_t, 4> kHyphens{8, 13, 18, 23};

int lowerHex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The 16 bytes of a canonical UUID text (lowercase, hyphens at 8, 13, 18 and 23), or false: then
// the text is kept as it is, so str() always gives back exactly what was read.
bool parseCanonical(std::string_view text, std::array<std::uint8_t, 16>& out) {
  if (text.size() != 36) return false;
  std::size_t b = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (i == kHyphens[0] || i == kHyphens[1] || i == kHyphens[2] || i == kHyphens[3]) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    const int hi = lowerHex(text[i]);
    const int lo = lowerHex(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[b++] = static_cast<std::uint8_t>((hi << 4) | lo);
    i += 2;
  }
  return true;
}

}  // namespace

Uid::Uid(std::string_view text) {
  if (text.empty()) return;
  if (parseCanonical(text, bytes_) && bytes_ != Bytes{}) return;
  bytes_ = Bytes{};
  text_ = std::make_unique<const std::string>(text);
}

Uid::Uid(const Uid& o) : bytes_(o.bytes_), text_(o.text_ ? std::make_unique<const std::string>(*o.text_) : nullptr) {}

Uid& Uid::operator=(const Uid& o) {
  if (this != &o) *this = Uid(o);
  return *this;
}

std::string Uid::str() const {
  if (text_) return *text_;
  if (bytes_ == Bytes{}) return {};
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (std::size_t b = 0; b < bytes_.size(); ++b) {
    if (b == 4 || b == 6 || b == 8 || b == 10) out += '-';
    out += kDigits[bytes_[b] >> 4];
    out += kDigits[bytes_[b] & 0xf];
  }
  return out;
}

bool Uid::operator==(const Uid& o) const {
  if (text_ || o.text_) return text_ && o.text_ && *text_ == *o.text_;
  return bytes_ == o.bytes_;
}

std::size_t Uid::hash() const {
  if (text_) return std::hash<std::string>()(*text_);
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::memcpy(&a, bytes_.data(), 8);
  std::memcpy(&b, bytes_.data() + 8, 8);
  return std::hash<std::uint64_t>()(a ^ (b * 0x9e3779b97f4a7c15ULL));
}

}  // namespace kdesched::api
