#include "pkg/cluster/input_buffer.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "pkg/api/text_input.h"

namespace kdesched::cluster {
namespace {

constexpr std::size_t kReleaseStep = std::size_t{1} << 20;
// The first bytes of text are enough to tell binary data from JSON or YAML: /dev/zero, an image
// or an archive is refused at once instead of after reading up to the limit (1 GiB by default).
constexpr std::size_t kHeadBytes = 512;

std::size_t pageSize() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
std::size_t roundUpToPage(std::size_t n) { return (n + pageSize() - 1) / pageSize() * pageSize(); }

// Closes the descriptor on every way out of readFile.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Status tooLarge(const std::string& path, std::size_t maxBytes) {
  return Status::error(path + ": larger than " + std::to_string(maxBytes) +
                       " bytes; raise --max-snapshot-bytes if this snapshot is real");
}

}  // namespace

InputBuffer::InputBuffer(InputBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      released_(std::exchange(other.released_, 0)) {}

InputBuffer& InputBuffer::operator=(InputBuffer&& other) noexcept {
  InputBuffer old(std::move(*this));
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  std::swap(capacity_, other.capacity_);
  std::swap(released_, other.released_);
  return *this;
}

InputBuffer::~InputBuffer() {
  if (data_) ::munmap(data_, capacity_);
}

// Makes room for `bytes` plus the padding; the mapping moves without copying its pages.
Status InputBuffer::reserve(std::size_t bytes) {
  const std::size_t want = roundUpToPage(bytes + simdjson::SIMDJSON_PADDING);
  if (want <= capacity_) return Status::ok();
  void* p = data_ ? ::mremap(data_, capacity_, want, MREMAP_MAYMOVE)
                  : ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Status::error(std::strerror(errno));
  data_ = static_cast<char*>(p);
  capacity_ = want;
  return Status::ok();
}

void InputBuffer::releaseBefore(const char* end) {
  if (!data_ || end <= data_ + released_) return;
  const std::size_t upTo = std::min(static_cast<std::size_t>(end - data_), size_) / pageSize() * pageSize();
  // madvise per item would be a system call every kilobyte: give back a megabyte at a time.
  if (upTo < released_ + kReleaseStep) return;
  ::madvise(data_ + released_, upTo - released_, MADV_DONTNEED);
  released_ = upTo;
}

Result<InputBuffer> InputBuffer::readFile(const std::string& path, std::size_t maxBytes) {
  Fd in{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0) return Status::error(path + ": cannot open the snapshot file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(in.fd, &st) == 0 && S_ISDIR(st.st_mode))
    return Status::error(path + ": is a directory; --snapshot takes a file (kubectl get ... -o json > FILE)");
  const bool regular = S_ISREG(st.st_mode);
  if (regular && static_cast<std::size_t>(st.st_size) > maxBytes) return tooLarge(path, maxBytes);
  InputBuffer buf;
  // A regular file's size is known (one byte more sees a file that grew); a pipe's is not.
  std::size_t room = regular ? static_cast<std::size_t>(st.st_size) + 1 : std::size_t{1} << 20;
  for (;;) {
    if (Status s = buf.reserve(std::min(room, maxBytes + 1)); !s.isOk())
      return Status::error(path + ": cannot read the snapshot file: " + s.message());
    std::size_t space = std::min(buf.capacity_ - simdjson::SIMDJSON_PADDING, maxBytes + 1) - buf.size_;
    // The first bytes on their own, even of a regular file read in one go otherwise: binary data
    // is refused before the rest is read.
    if (buf.size_ < kHeadBytes) space = std::min(space, kHeadBytes - buf.size_);
    const ssize_t n = ::read(in.fd, buf.data_ + buf.size_, space);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::error(path + ": cannot read the snapshot file: " + std::strerror(errno));
    if (n == 0) break;
    const std::size_t headBefore = std::min(buf.size_, kHeadBytes);
    buf.size_ += static_cast<std::size_t>(n);
    if (headBefore < kHeadBytes) {
      Status head = api::checkTextStart({buf.data_, std::min(buf.size_, kHeadBytes)}, kSnapshotText);
      if (!head.isOk()) return Status::error(path + ": " + head.message());
    }
    if (buf.size_ > maxBytes) return tooLarge(path, maxBytes);
    if (buf.size_ + simdjson::SIMDJSON_PADDING >= buf.capacity_) room = std::max(room, buf.size_) * 2;
  }
  return buf;
}

}  // namespace kdesched::cluster
