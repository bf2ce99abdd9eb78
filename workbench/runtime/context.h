#pragma once
// Where and how a report was made: the build, the source tree, the host, the device.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// One slice of a sharded sweep (wb sweep --shard K/N, workbench/cli/sweep_shards.h): unit
// i (0-based) of the sweep's plan -- its (variant, launch parameters, shape) in the
// canonical order -- belongs to shard i % N + 1.
struct ShardInfo {
  int index = 1;      // K, 1-based
  int count = 1;      // N
  int64_t units = 0;  // units of the whole sweep, all shards together
  std::string plan;   // fingerprint of the whole sweep's units in their order
  uint64_t seed = 0;  // of the inputs (an empty shard has no record to carry it)
};

// Where a report made by wb merge came from: the shards of one sweep, and which of
// them were missing (wb merge --allow-missing).
struct MergedShard {
  int index = 1;
  std::string file;  // the shard's report as given to wb merge
  std::string host;  // from its context
  std::string created;
  std::string command;
  int64_t records = 0;
};
struct MergeInfo {
  int count = 1;  // N
  int64_t units = 0;
  std::string plan;
  uint64_t seed = 0;
  std::vector<MergedShard> shards;  // by index
  std::vector<int> missing;         // indices of the shards not given
};

// The device the records' predicted times are for (wb check, run or sweep --backend emu
// --predict-for DEVICE, workbench/runtime/device_description.h): a report holding it was
// made on the emulator, and its records' `predicted` times were never measured.
struct PredictedFor {
  std::string device;              // its name, as CUDA reports it: "NVIDIA H100 80GB HBM3"
  std::string slug;                // of that name: the best.json section it makes
  std::string compute_capability;  // "9.0"
  int multiprocessors = 0;
  int64_t l2_bytes = 0;
  std::string description;       // the device description it was read from
  bool device_measured = false;  // the description's `measured`: false, unscored until measured
  std::string model;             // the prediction model's version (kPredictModel)
  uint64_t sample_blocks = 0;    // blocks counted per launch (0: every block)
  // Where the model's constants came from: "fitted: <scores file>" (the device's own
  // measured sweep, wb predict --scores-out) or "prior" (predict.h's defaults). Empty in
  // reports written before it was recorded (they used the prior).
  std::string constants;
};

struct ReportContext {
  BuildInfo build;
  SourceState source;
  std::string host;
  std::string created;  // UTC, ISO 8601
  std::string command;  // the wb command line
  DeviceInfo device;
  TimingOptions timing;                       // resolved for the backend
  Ceilings ceilings;                          // of the device (zero when not measured)
  std::optional<ShardInfo> shard;             // the report of a shard (wb sweep --shard)
  std::optional<MergeInfo> merged;            // a report of wb merge
  std::optional<PredictedFor> predicted_for;  // its records' times are predicted, for this device
};

const BuildInfo& build_info();
// The git commit and dirty flag of the source tree this wb was built from; falls back
// to the commit recorded when the build was configured.
SourceState source_state();
std::string host_name();
std::string utc_now();
std::string source_dir();           // the repository this wb was built from
std::string default_results_dir();  // <source_dir>/results, or $WB_RESULTS_DIR

// What this CPU and the CPU rungs' libraries can do (asked once; the first call asks
// oneDNN). Reports of the cpu backend carry it (make_context); `wb device` prints it.
CpuCapabilities host_cpu_capabilities();

ReportContext make_context(const Executor& ex, const TimingOptions& timing, const std::string& command);

}  // namespace wb
