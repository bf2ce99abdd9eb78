#pragma once
// wb predict --plan: a training step predicted from the kernel plan a trainer printed
// (its log, or --print-plan's output), call by call, launched and as one CUDA graph,
// and held against the step time the same log measured (issue 51, item 3).
#include <cstdint>
#include <string>

#include "workbench/runtime/predict.h"

namespace wb::cli {

struct StepOptions {
  std::string plan;  // a trainer log or --print-plan output holding "kernel plan of one step"
  uint64_t sample_blocks = 2;
  uint64_t seed = 1;
  ModelConstants constants;  // fitted to the device's measured sweep
};

// Prints the step's prediction per call and in all; exit 0, or UsageError for a plan it
// cannot read or a variant this build lacks.
int predict_step(const DeviceModel& device, const StepOptions& o);

}  // namespace wb::cli
