#include "workbench/runtime/context.h"

#include <cblas.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>

#include "base/cpu_isa.h"
#include "device/cpu/onednn.h"
#include "workbench/runtime/build_info.h"

namespace wb {
namespace {

// OpenBLAS's DYNAMIC_ARCH build picks its kernels for the CPU when it loads, before
// main: WB_CPU_ISA cannot cap it, OPENBLAS_CORETYPE can (tools/capped.sh sets both).
// Its AVX-512 cores, by the names openblas_get_corename() gives.
bool openblas_core_uses_avx512(std::string core) {
  for (char& c : core) c = char(std::tolower(static_cast<unsigned char>(c)));
  return core == "skylakex" || core == "cooperlake" || core == "sapphirerapids";
}

CpuCapabilities describe_host_cpu() {
  const cpu::Isa& isa = cpu::isa();
  const cpu::OneDnnInfo& dnn = cpu::onednn_info();
  CpuCapabilities c;
  c.features = cpu::describe(isa.features);
  c.detected = cpu::describe(isa.detected);
  c.detected_level = std::string(cpu::to_string(isa.detected_level));
  c.cap = isa.cap ? std::string(cpu::to_string(*isa.cap)) : "";
  c.onednn = dnn.describe();
  c.onednn_bf16_matmul = !dnn.bf16_matmul_missing;
  c.openblas_core = openblas_get_corename();
  if (isa.level < cpu::IsaLevel::avx512 && openblas_core_uses_avx512(c.openblas_core))
    c.openblas_core += " (AVX-512 kernels, above WB_CPU_ISA's cap: OPENBLAS_CORETYPE=Haswell caps them)";
  return c;
}

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

CpuCapabilities host_cpu_capabilities() {
  static const CpuCapabilities c = describe_host_cpu();
  return c;
}

ReportContext make_context(const Executor& ex, const TimingOptions& timing, const std::string& command) {
  ReportContext c;
  c.build = build_info();
  c.source = source_state();
  c.host = host_name();
  c.created = utc_now();
  c.command = command;
  c.device = ex.device();
  if (c.device.backend == Backend::cpu) c.device.cpu = host_cpu_capabilities();
  c.timing = timing.resolved(ex.backend());
  c.timing.flush_bytes = c.timing.flush_cache ? ex.flush_bytes() : 0;
  return c;
}

}  // namespace wb
