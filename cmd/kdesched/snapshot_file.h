// The file `plan --save-snapshot` writes. What a live plan read may hold secrets (environment
// values in pod specs), and a plan that fails half-way has written half a snapshot, so the file is
// written beside its destination as PATH.tmp-<pid>, readable by its owner only, and takes the
// destination's name only when the plan succeeded: a failed run leaves whatever was there before.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "pkg/base/status.h"

namespace kdesched::cmd {

class SnapshotFile {
 public:
  // `inputs`: the files the run reads (policy, kubeconfig, ...); saving over one of them is refused
  // before anything is opened. `pid` names the temporary file.
  static Result<SnapshotFile> create(const std::string& path, const std::vector<std::string>& inputs, long pid);
  SnapshotFile(SnapshotFile&& other) noexcept;
  SnapshotFile& operator=(SnapshotFile&&) = delete;
  SnapshotFile(const SnapshotFile&) = delete;
  SnapshotFile& operator=(const SnapshotFile&) = delete;
  ~SnapshotFile();  // abandons an uncommitted file

  std::ostream& stream() { return out_; }
  // Flushes, closes and renames the file to its destination.
  Status commit();
  // Removes the temporary file; the destination is untouched.
  void abandon();
  const std::string& temporaryPath() const { return tmp_; }

 private:
  SnapshotFile(std::string path, std::string tmp) : path_(std::move(path)), tmp_(std::move(tmp)) {}
  std::string path_;
  std::string tmp_;
  std::ofstream out_;
  bool open_ = false;
};

}  // namespace kdesched::cmd
