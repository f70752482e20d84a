#include "cmd/kdesched/snapshot_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace kdesched::cmd {
namespace {

namespace fs = std::filesystem;

// The same file: by identity where both exist (a link, "./x" and "x"), else by normalized path.
bool sameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec) && !ec;
  const fs::path pa = fs::absolute(a, ec).lexically_normal();
  const fs::path pb = fs::absolute(b, ec).lexically_normal();
  return pa == pb;
}

}  // namespace

Result<SnapshotFile> SnapshotFile::create(const std::string& path, const std::vector<std::string>& inputs, long pid) {
  for (const std::string& input : inputs)
    if (!input.empty() && sameFile(path, input))
      return Status::error("--save-snapshot \"" + path + "\" is a file this run reads (" + input +
                           "): saving would overwrite it; name another file");
  std::error_code ec;
  if (fs::is_directory(path, ec)) return Status::error("--save-snapshot \"" + path + "\" is a directory: name a file");
  SnapshotFile f(path, path + ".tmp-" + std::to_string(pid));
  // Created owner-only before the stream opens it: pod specs may carry secrets.
  const int fd = ::open(f.tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::error("--save-snapshot: cannot write " + f.tmp_ + ": " + std::strerror(errno));
  ::close(fd);
  f.open_ = true;
  f.out_.open(f.tmp_, std::ios::binary | std::ios::trunc);
  if (!f.out_) {
    const std::string why = std::strerror(errno);
    f.abandon();
    return Status::error("--save-snapshot: cannot write " + f.tmp_ + ": " + why);
  }
  return f;
}

SnapshotFile::SnapshotFile(SnapshotFile&& other) noexcept
    : path_(std::move(other.path_)), tmp_(std::move(other.tmp_)), out_(std::move(other.out_)), open_(other.open_) {
  other.open_ = false;
}

SnapshotFile::~SnapshotFile() { abandon(); }

Status SnapshotFile::commit() {
  if (!open_) return Status::error("--save-snapshot: " + tmp_ + " is no longer there");
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written || out_.fail()) {
    abandon();
    return Status::error("--save-snapshot: writing " + tmp_ + " failed (disk full?); " + path_ + " is left as it was");
  }
  std::error_code ec;
  fs::rename(tmp_, path_, ec);
  if (ec) {
    abandon();
    return Status::error("--save-snapshot: cannot rename " + tmp_ + " to " + path_ + ": " + ec.message());
  }
  open_ = false;
  return Status::ok();
}

void SnapshotFile::abandon() {
  if (!open_) return;
  if (out_.is_open()) out_.close();
  std::error_code ec;
  fs::remove(tmp_, ec);
  open_ = false;
}

}  // namespace kdesched::cmd
