#pragma once
// The step loop: the training steps from the first (1, or the resumed state's step + 1)
// to --steps, launched op by op or replayed as a CUDA graph, each timed, printed and
// logged, with validation, samples, checkpoints of the training state and (step 1)
// --debug-state between them.
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "trainer/gpt2.h"
#include "trainer/model.h"
#include "trainer/options.h"
#include "trainer/output.h"
#include "trainer/phases.h"
#include "trainer/state.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/kernel_plan.h"

namespace wb::trainer {

// The training itself failed (a non-finite loss): exit 1, apart from internal errors.
struct TrainingFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Everything the step loop works with, made by the phases before it.
struct Loop {
  const Options& o;
  const Config& config;
  Gpt2& model;
  KernelPlan& plan;
  Executor& ex;
  bool cuda_graph;
  TrainingData& data;
  StepLog& log;
  double peak_tflops;
  int first_step;
  uint64_t plan_fingerprint;
  std::optional<TrainState>& resumed;  // the sampler generator's state; reset once on the model
};

StepTotals train_steps(Loop& l);

}  // namespace wb::trainer
