#include "workbench/cli/pipeline_isolate.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/errors.h"
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

struct ChildOutcome {
  std::optional<Report> report;  // the child's report, when it wrote one
  std::string failure;           // otherwise why not: "child process died: signal 11 (Segmentation fault)"
};

// Forks and execs this program with `words` as its argv; its stdout goes to /dev/null,
// its stderr to `errors_path`. Returns the child's wait status.
int run_and_wait(std::vector<std::string> words, const std::string& errors_path) {
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls.
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
  return status;
}

// Runs the child and reads what it left: its report, or why there is none.
ChildOutcome run_child(const std::vector<std::string>& args, const std::string& report_path, IsolationDir& dir) {
  const std::string errors_path = dir.next_file("stderr");
  std::vector<std::string> words{"wb"};
  words.insert(words.end(), args.begin(), args.end());
  const int status = run_and_wait(std::move(words), errors_path);

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

// Whether two configurations set the same values, in whatever order: a report read back
// lists a record's launch parameters by name (a JSON object), the plan in the order the
// variant declares them (attention_backward's block_size, tile, dq_atomics).
bool same_params(const ParamValues& a, const ParamValues& b) {
  auto sorted = [](const ParamValues& p) {
    auto items = p.items();
    std::sort(items.begin(), items.end());
    return items;
  };
  return sorted(a) == sorted(b);
}

// The child's record of the configuration `wanted` stands for (and the same pass:
// with or without the optional tensors), if it reported one.
const Record* find_record(const Report& report, const Record& wanted) {
  for (const Record& r : report.records)
    if (r.variant == wanted.variant && same_params(r.params, wanted.params) &&
        r.omitted.empty() == wanted.omitted.empty())
      return &r;
  return nullptr;
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

ChildRecords records_from_child(const std::vector<std::string>& args, const std::string& report_path,
                                std::vector<Record> wanted, IsolationDir& dir) {
  const ChildOutcome child = run_child(args, report_path, dir);
  ChildRecords out;
  if (child.report) out.context = child.report->context;
  for (Record& w : wanted) {
    if (const Record* r = child.report ? find_record(*child.report, w) : nullptr) {
      out.records.push_back(*r);
      continue;
    }
    w.status = Status::incorrect;
    w.reason = child.report ? "the child process reported no result for this configuration" : child.failure;
    out.records.push_back(std::move(w));
  }
  return out;
}

}  // namespace wb::cli
