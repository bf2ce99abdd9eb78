#include "workbench/cli/pipeline_isolate.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "kernels/errors.h"
#include "workbench/cli/commands.h"

namespace wb::cli {
namespace {

// The last line of the child's error output that says what went wrong ("wb: error:
// ..."), else its last line; empty when it wrote nothing.
std::string last_words(const std::string& path) {
  std::ifstream in(path);
  std::string line, last, said;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.rfind("wb: ", 0) == 0) said = line;
  }
  return said.empty() ? last : said;
}

}  // namespace

IsolationDir::IsolationDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "wb-isolate-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    throw FileError("cannot create a temporary folder for --isolate in " + base.string() + ": " + std::strerror(errno));
  path_ = pattern;
}

IsolationDir::~IsolationDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string IsolationDir::next_file(const std::string& stem) {
  return path_ + "/" + stem + "-" + std::to_string(count_++) + ".json";
}

ChildOutcome run_child(const std::vector<std::string>& args, const std::string& report_path, IsolationDir& dir) {
  const std::string errors_path = dir.next_file("stderr");
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls.
  std::vector<std::string> words{"wb"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  static const char kSelf[] = "/proc/self/exe";

  const pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork for --isolate");
  if (pid == 0) {
    const int out = open("/dev/null", O_WRONLY);
    const int err = open(errors_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out >= 0) dup2(out, STDOUT_FILENO);
    if (err >= 0) dup2(err, STDERR_FILENO);
    execv(kSelf, argv.data());
    static const char kFailed[] = "wb: error: --isolate could not start a child process (execv failed)\n";
    ssize_t ignored = write(STDERR_FILENO, kFailed, sizeof kFailed - 1);
    (void)ignored;
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid for --isolate");
  }

  ChildOutcome outcome;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    outcome.failure = "child process died: signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    return outcome;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::error_code ec;
  if ((code == kOk || code == kCheckFailed) && std::filesystem::exists(report_path, ec)) {
    try {
      outcome.report = read_report(report_path, registry());
    } catch (const UsageError& e) {
      outcome.failure = std::string("child process wrote an unreadable report: ") + e.what();
    }
    return outcome;
  }
  outcome.failure = "child process exited with status " + std::to_string(code) + " and no report";
  if (const std::string words_said = last_words(errors_path); !words_said.empty()) outcome.failure += ": " + words_said;
  return outcome;
}

}  // namespace wb::cli
