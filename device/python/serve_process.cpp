#include "device/python/serve_process.h"

#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "base/errors.h"

extern char** environ;

namespace wb::python {
namespace {

namespace fs = std::filesystem;

std::string tail_of(const fs::path& file, std::size_t bytes = 1500) {
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > bytes) text = "..." + text.substr(text.size() - bytes);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

ServeProcess::ServeProcess(std::string tool, std::string what, std::string fix)
    : tool_(std::move(tool)), what_(std::move(what)), fix_(std::move(fix)) {}

ServeProcess::~ServeProcess() {
  stop();  // its stdin ends: it exits
  std::error_code ec;
  if (!log_.empty()) fs::remove(log_, ec);
}

std::string ServeProcess::ask(const std::string& request) {
  std::lock_guard<std::mutex> lock(io_);
  start();
  if (!send_all(request + "\n")) died("while reading a request");
  std::string answer;
  if (!read_line(answer)) died("while answering '" + request + "'");
  return answer;
}

std::string ServeProcess::greeting() {
  std::lock_guard<std::mutex> lock(io_);
  start();
  return greeting_;
}

void ServeProcess::start() {
  if (!unavailable_.empty()) throw Unsupported(unavailable_);
  if (fd_ >= 0) return;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw std::runtime_error(what_ + ": socketpair: " + std::strerror(errno));
  char log_template[] = "/tmp/wb-python-log-XXXXXX";
  const int log_fd = ::mkstemp(log_template);
  if (log_fd < 0) {
    ::close(pair[0]);
    ::close(pair[1]);
    throw std::runtime_error(what_ + ": a log file in /tmp: " + std::strerror(errno));
  }
  log_ = log_template;
  const std::string root = WB_SOURCE_DIR;
  const std::string python = root + "/tools/python/python.sh";
  const std::string tool = root + "/" + tool_;
  const char* argv[] = {"bash", python.c_str(), tool.c_str(), "--serve", nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pair[1], 0);
  posix_spawn_file_actions_adddup2(&actions, pair[1], 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  const int rc = ::posix_spawnp(&pid_, "bash", &actions, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pair[1]);
  ::close(log_fd);
  if (rc != 0) {
    ::close(pair[0]);
    pid_ = -1;
    unavailable_ = what_ + " cannot start: bash: " + std::strerror(rc);
    throw Unsupported(unavailable_);
  }
  fd_ = pair[0];
  // Its first line says whether what it needs imports here.
  std::string first;
  if (!read_line(first) || first.rfind("ready", 0) != 0) {
    const std::string why = first.rfind("unavailable: ", 0) == 0 ? first.substr(13) : tail_of(log_);
    unavailable_ = what_ + " is not available here (" + why + "): " + fix_;
    stop();
    throw Unsupported(unavailable_);
  }
  greeting_ = first.size() > 6 ? first.substr(6) : "";
}

void ServeProcess::stop() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void ServeProcess::died(const std::string& when) {
  stop();
  const std::string why = tail_of(log_);
  throw std::runtime_error(what_ + " (" + tool_ + ") ended " + when + (why.empty() ? "" : ": " + why));
}

bool ServeProcess::send_all(const std::string& text) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = ::send(fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += std::size_t(n);
  }
  return true;
}

bool ServeProcess::read_line(std::string& line) {
  line.clear();
  for (;;) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return true;
    }
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(chunk, std::size_t(n));
  }
}

}  // namespace wb::python
