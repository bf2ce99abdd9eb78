#pragma once
// One measured (op, variant, launch parameters, shape): what the harness produces and
// what a report holds, one record each.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/shape.h"
#include "contract/types.h"
#include "contract/variant.h"
#include "workbench/runtime/ceilings.h"
#include "workbench/runtime/counters.h"
#include "workbench/runtime/timing.h"
#include "workbench/runtime/validate.h"

namespace wb {

// ok: correct (and timed, in a sweep); incorrect; skipped: the variant cannot run this
// shape or configuration (with the reason); not_emulated: a CUDA variant the emulator
// cannot run (it needs cuDNN, cuBLASLt or tensor cores); not_run: never attempted
// because the device was lost to an earlier fault.
enum class Status { ok, incorrect, skipped, not_emulated, not_run };
std::string_view to_string(Status s);
Status parse_status(std::string_view s);  // throws UsageError

// "B=8 T=1024 C=768" plus " without bias" for the optional tensors passed as null.
std::string shape_with_omitted(std::string shape, const std::vector<std::string>& omitted);

// A configuration: an op at a shape, one of its variants and the variant's launch
// parameters. A record is the measurement of one; a best.json entry names the one chosen.
struct Configuration {
  std::string op;
  std::vector<std::string> dims;  // the op's dims, in order
  Shape shape;
  int variant = 0;
  std::string variant_name;
  NumericClass numeric = NumericClass::fp32;
  ParamValues params;
};

// A time predicted, never measured: the prediction model's (workbench/runtime/predict.h)
// for a configuration that passed the emulated check (wb check, run or sweep --backend
// emu --predict-for DEVICE), on the device its report's context.predicted_for names. It
// stays apart from `timing`, so that nothing reading a report takes it for a measurement.
struct PredictedTime {
  double seconds = 0;
  std::string bound;  // what the model's max picked: "dram", "flops", "shared", ...
  uint64_t launches = 1;
};

struct Record : Configuration {
  Backend backend = Backend::cpu;
  std::string source;                // variant file, relative to the repository
  std::string source_hash;           // its identity when this binary was built (base/source_identity.h)
  std::vector<std::string> omitted;  // optional tensors passed as null (wb check runs without a bias too)
  Status status = Status::skipped;
  std::string reason;  // why skipped or incorrect
  std::vector<TensorCheck> errors;
  std::optional<bool> deterministic;  // two runs on the same inputs bitwise equal
  // What a check noticed without failing the configuration (the emulator's synccheck
  // note on a __syncthreads reached after threads of the block exited).
  std::vector<std::string> notes;
  std::optional<TimingStats> timing;
  // emu with --counters: what the first validated run's warps asked of memory.
  std::optional<Counters> counters;
  std::optional<PredictedTime> predicted;  // with --predict-for, for a configuration that passed
  uint64_t seed = 0;                       // of the inputs
  double bytes = 0;                        // the op's byte model at this shape
  double flops = 0;                        // the op's flop model at this shape

  double gbps() const { return timing && timing->median_s > 0 ? bytes / timing->median_s * 1e-9 : 0.0; }
  double tflops() const { return timing && timing->median_s > 0 ? flops / timing->median_s * 1e-12 : 0.0; }
  PercentOfPeak percent(const Ceilings& c) const {
    return timing ? percent_of_peak(c, numeric, bytes, flops, timing->median_s) : PercentOfPeak{};
  }
  std::string shape_text() const { return shape_with_omitted(describe(shape, dims), omitted); }
  std::string variant_label() const;  // "cuda/3 warp_per_row"
};

}  // namespace wb
