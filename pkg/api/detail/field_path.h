// What the JSON and the protobuf readers share: the field path kept for errors, in JSON's names
// whatever the wire (`spec.containers[0].resources.requests.cpu: invalid quantity "1x"` from
// either), and the per-thread symbol cache. Include from pkg/api .cpp files only.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "pkg/api/symbol.h"
#include "pkg/base/status.h"

namespace kdesched::api::detail {

// Label keys/values, namespaces and node names repeat across every object, so a small per-thread
// cache in front of the global (locked) symbol table makes the common case lock-free.
inline Symbol intern(std::string_view s) {
  if (s.empty()) return Symbol();
  constexpr std::size_t kSlots = 4096;
  thread_local std::array<Symbol, kSlots> cache;  // an empty slot holds "" and never matches
  Symbol& slot = cache[std::hash<std::string_view>()(s) & (kSlots - 1)];
  if (slot.view() != s) slot = Symbol(s);
  return slot;
}

// Field paths. Decoders push the key or index they descend into; the path text is only built when
// an error is reported, so the happy path allocates nothing for it.
class FieldPath {
  struct Segment {
    std::string_view key;
    std::int64_t index;
  };

 public:
  void push(std::string_view key) { pushSegment(Segment{key, -1}); }
  void push(std::size_t index) { pushSegment(Segment{{}, static_cast<std::int64_t>(index)}); }
  void pop() { --depth_; }

  Status fail(std::string_view what) const {
    std::string msg = path();
    if (!msg.empty()) msg += ": ";
    msg += what;
    return Status::error(std::move(msg));
  }

 private:
  // A fixed array rather than a vector: pushing happens for every field decoded. Paths deeper
  // than the array (no real object nests that far in the fields we read) are shown truncated.
  static constexpr std::size_t kMaxDepth = 48;

  void pushSegment(Segment s) {
    if (depth_ < kMaxDepth) path_[depth_] = s;
    ++depth_;
  }

  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < std::min(depth_, kMaxDepth); ++i) {
      const Segment& seg = path_[i];
      if (seg.index >= 0) {
        out += '[';
        out += std::to_string(seg.index);
        out += ']';
      } else {
        if (!out.empty()) out += '.';
        out += seg.key;
      }
    }
    if (depth_ > kMaxDepth) out += "...";
    return out;
  }

  std::array<Segment, kMaxDepth> path_;
  std::size_t depth_ = 0;
};

class At {
 public:
  At(FieldPath& c, std::string_view key) : c_(c) { c_.push(key); }
  At(FieldPath& c, std::size_t index) : c_(c) { c_.push(index); }
  ~At() { c_.pop(); }
  At(const At&) = delete;
  At& operator=(const At&) = delete;

 private:
  FieldPath& c_;
};

// Runs a decoder so that no exception (allocation failure, a library throwing) leaves this module.
template <typename F>
Status guarded(F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Status::error(std::string("decoding failed: ") + e.what());
  } catch (...) {
    return Status::error("decoding failed");
  }
}

}  // namespace kdesched::api::detail
