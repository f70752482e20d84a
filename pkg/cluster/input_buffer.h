// A snapshot file read into memory once, in the form simdjson parses in place (padded), and given
// back to the system piece by piece as the loader decodes it: at 150,000 pods the text is as big
// as the decoded store, and holding both at once doubled `kdesched plan`'s peak memory.
//
// The bytes live in an anonymous mapping, grown with mremap (no copy) while a pipe or FIFO is read;
// releaseBefore() hands whole pages before a point back (madvise MADV_DONTNEED), after which those
// bytes read as zeros: a caller releases only what it will not read again.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "pkg/base/status.h"

namespace kdesched::cluster {

// What a snapshot's text is expected to be, as its errors say.
inline constexpr std::string_view kSnapshotText = "the JSON or YAML text that kubectl get -o json|yaml writes";

class InputBuffer {
 public:
  // Reads all of `path` (a file, a pipe, a FIFO, a device). More than `maxBytes` is refused as soon
  // as it is read, so an endless pipe stops there; first bytes that are binary data, not text
  // (api::checkTextStart), are refused as soon as they are read, so /dev/zero stops at once. Errors
  // name the path and say what to do (a directory, a file that cannot be opened or read, one larger
  // than the limit, binary data).
  static Result<InputBuffer> readFile(const std::string& path, std::size_t maxBytes);

  InputBuffer() = default;
  InputBuffer(InputBuffer&& other) noexcept;
  InputBuffer& operator=(InputBuffer&& other) noexcept;
  InputBuffer(const InputBuffer&) = delete;
  InputBuffer& operator=(const InputBuffer&) = delete;
  ~InputBuffer();

  std::string_view text() const { return {data_, size_}; }
  // Bytes readable from data(): at least size() + 64, simdjson's padding.
  std::size_t capacity() const { return capacity_; }
  // Gives back the whole pages that end at or before `end`, a pointer into text().
  void releaseBefore(const char* end);
  // Bytes given back so far.
  std::size_t released() const { return released_; }

 private:
  Status reserve(std::size_t bytes);
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  // the mapping's length
  std::size_t released_ = 0;
};

}  // namespace kdesched::cluster
