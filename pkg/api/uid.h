// Object UIDs. The API server assigns RFC 4122 UUIDs written as 36 lowercase characters; kdesched
// keeps those as their 16 bytes instead of a 36-character heap string (a cached pod's largest
// string). Any other text (hand-written snapshots, tests) is kept as it is, so nothing is lost.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kdesched::api {

class Uid {
 public:
  Uid() = default;
  Uid(std::string_view text);  // NOLINT(google-explicit-constructor): a UID is its text
  Uid(const std::string& text) : Uid(std::string_view(text)) {}  // NOLINT(google-explicit-constructor)
  Uid(const char* text) : Uid(std::string_view(text)) {}         // NOLINT(google-explicit-constructor)
  Uid(const Uid& o);
  Uid(Uid&&) noexcept = default;
  Uid& operator=(const Uid& o);
  Uid& operator=(Uid&&) noexcept = default;
  ~Uid() = default;

  std::string str() const;  // the text it was made from
  bool empty() const { return text_ == nullptr && bytes_ == Bytes{}; }
  void clear() { *this = Uid(); }
  bool operator==(const Uid& o) const;
  std::size_t hash() const;

 private:
  using Bytes = std::array<std::uint8_t, 16>;
  // A canonical UUID other than all zeros: its bytes, text_ null. Any other non-empty text:
  // text_ (bytes_ zero). Empty: both zero.
  Bytes bytes_{};
  std::unique_ptr<const std::string> text_;
};

}  // namespace kdesched::api

template <>
struct std::hash<kdesched::api::Uid> {
  std::size_t operator()(const kdesched::api::Uid& u) const noexcept { return u.hash(); }
};
