#include "workbench/runtime/context.h"

#include <cblas.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>

#include "workbench/runtime/build_info.h"

namespace wb {
namespace {

// The first line a shell command prints, or nullopt when it fails.
std::optional<std::string> run_command(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((cmd + " 2>/dev/null").c_str(), "r"), pclose);
  if (!pipe) return std::nullopt;
  std::string out;
  std::array<char, 256> buf{};
  while (fgets(buf.data(), int(buf.size()), pipe.get())) out += buf.data();
  const int status = pclose(pipe.release());
  if (status != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// OpenBLAS's configuration string and its threading (openblas_get_parallel: 0, 1 or 2).
std::string blas_info() {
  static constexpr const char* kThreading[] = {"sequential", "pthread", "openmp"};
  const int parallel = openblas_get_parallel();
  const char* threading = parallel >= 0 && parallel <= 2 ? kThreading[parallel] : "unknown";
  return std::string(openblas_get_config()) + "; threading: " + threading;
}

}  // namespace

const BuildInfo& build_info() {
  static const BuildInfo info{WB_VERSION,    WB_BUILD_TYPE,         WB_CXX_COMPILER,    WB_CXX_FLAGS, WB_CUDA_COMPILER,
                              WB_CUDA_FLAGS, WB_CUDA_ARCHITECTURES, "google-benchmark", blas_info()};
  return info;
}

std::string source_dir() { return WB_SOURCE_DIR; }

std::string default_results_dir() {
  if (const char* dir = std::getenv("WB_RESULTS_DIR"); dir && *dir) return dir;
  return source_dir() + "/results";
}

SourceState source_state() {
  const std::string git = "git -C '" + source_dir() + "' ";
  SourceState s;
  if (auto commit = run_command(git + "rev-parse HEAD"); commit && !commit->empty()) {
    s.commit = *commit;
    auto status = run_command(git + "status --porcelain --untracked-files=no");
    s.dirty = status && !status->empty();
  } else {
    s.commit = WB_CONFIGURED_COMMIT;
  }
  return s;
}

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

ReportContext make_context(const Executor& ex, const TimingOptions& timing, const std::string& command) {
  ReportContext c;
  c.build = build_info();
  c.source = source_state();
  c.host = host_name();
  c.created = utc_now();
  c.command = command;
  c.device = ex.device();
  c.timing = timing.resolved(ex.backend());
  c.timing.flush_bytes = c.timing.flush_cache ? ex.flush_bytes() : 0;
  return c;
}

}  // namespace wb
