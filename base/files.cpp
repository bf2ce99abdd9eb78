#include "base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace wb {
namespace {

std::string reason(int err) { return std::strerror(err); }

std::filesystem::path temporary_beside(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  std::filesystem::path tmp = target;
  tmp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  return tmp;
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  std::error_code ec;
  if (std::filesystem::is_directory(target_, ec))
    throw FileError("cannot write " + target_.string() + ": it is a folder");
  temporary_ = temporary_beside(target_);
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw FileError("cannot write " + target_.string() + ": " + reason(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temporary_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temporary_.c_str());
  throw FileError("cannot write " + target_.string() + ": " + what + reason(err));
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (fd_ < 0) throw FileError("cannot write " + target_.string() + ": the file is closed");
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("", errno);
    }
    p += n;
    bytes -= std::size_t(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw FileError("cannot write " + target_.string() + ": the file is closed");
  if (::fsync(fd_) != 0) fail("flushing to disk failed: ", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temporary_.c_str());
    throw FileError("cannot write " + target_.string() + ": " + reason(err));
  }
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary_.c_str());
    throw FileError("cannot write " + target_.string() + ": " + reason(err));
  }
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

void check_writable(const std::filesystem::path& path, std::string_view what) {
  const std::string label = std::string(what) + " " + path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw FileError("cannot write " + label + ": it is a folder");
  std::filesystem::path folder = path.parent_path();
  if (folder.empty()) folder = ".";
  if (!std::filesystem::is_directory(folder, ec))
    throw FileError("cannot write " + label + ": the folder " + folder.string() + " does not exist");
  if (::access(folder.c_str(), W_OK) != 0) throw FileError("cannot write " + label + ": " + reason(errno));
  if (std::filesystem::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    throw FileError("cannot write " + label + ": " + reason(errno));
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  const bool same = std::filesystem::equivalent(a, b, ec);
  return !ec && same;
}

}  // namespace wb
