#pragma once
// Files that are never left broken: every file wb, the trainer and the data tools
// write (reports, best.json, checkpoints, token files, plots' inputs) goes to a
// temporary file beside its target, is flushed to disk, checked, and renamed over the
// target. A crash, a kill or a full disk leaves the previous file (or none), never a
// truncated or empty one. Write errors are errors (FileError), naming the file and
// the reason.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/errors.h"

namespace wb {

class AtomicFile {
 public:
  // Creates the temporary file (target + ".tmp-<pid>-<n>") in the target's folder;
  // throws FileError when it cannot.
  explicit AtomicFile(std::filesystem::path target);
  // Removes the temporary file unless commit() succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t bytes);  // throws FileError (ENOSPC: "no space left on device")
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Flushes to disk and renames the temporary file over the target; throws FileError.
  void commit();

  const std::filesystem::path& target() const { return target_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  int fd_ = -1;
  bool committed_ = false;
};

// The whole file in one call.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// Throws FileError when `path` cannot be written (its folder is missing or not
// writable, or path is a folder), without creating or changing anything: for checking
// output flags before the work starts.
void check_writable(const std::filesystem::path& path, std::string_view what);

// Whether two paths name the same existing file (an output over one of the inputs).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace wb
