#pragma once
// Where and how a report was made: the build, the source tree, the host, the device.
#include <cstdint>
#include <string>

#include "workbench/runtime/ceilings.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/timing.h"

namespace wb {

struct BuildInfo {
  std::string wb_version;
  std::string build_type;
  std::string cxx_compiler;
  std::string cxx_flags;
  std::string cuda_compiler;  // empty in a build without CUDA
  std::string cuda_flags;
  std::string cuda_architectures;
  std::string benchmark_engine;  // "google-benchmark"
  // The BLAS loaded at run time (the system's alternatives can swap it): OpenBLAS's
  // configuration, its micro-kernel set and its threading, e.g. "OpenBLAS 0.3.21 ...
  // Haswell ...; threading: openmp". Empty in reports written before it was recorded.
  std::string blas;
};

struct SourceState {
  std::string commit;  // "unknown" outside a git checkout
  bool dirty = false;
};

struct ReportContext {
  BuildInfo build;
  SourceState source;
  std::string host;
  std::string created;  // UTC, ISO 8601
  std::string command;  // the wb command line
  DeviceInfo device;
  TimingOptions timing;  // resolved for the backend
  Ceilings ceilings;     // of the device (zero when not measured)
};

const BuildInfo& build_info();
// The git commit and dirty flag of the source tree this wb was built from; falls back
// to the commit recorded when the build was configured.
SourceState source_state();
std::string host_name();
std::string utc_now();
std::string source_dir();           // the repository this wb was built from
std::string default_results_dir();  // <source_dir>/results, or $WB_RESULTS_DIR

ReportContext make_context(const Executor& ex, const TimingOptions& timing, const std::string& command);

}  // namespace wb
