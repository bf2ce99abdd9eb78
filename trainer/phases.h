#pragma once
// The phases of a run around its step loop: where the model comes from, the data, the
// executor and the kernel plan, whether the step runs as a CUDA graph, and the model
// file written after it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/bf16.h"
#include "contract/registry.h"
#include "trainer/data.h"
#include "trainer/gpt2.h"
#include "trainer/model.h"
#include "trainer/options.h"
#include "trainer/state.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/kernel_plan.h"
#include "workbench/runtime/workloads.h"

namespace wb::trainer {

// Where the model comes from: the resumed state, an llm.c model file, or --init (whose
// parameters are drawn once the batch and sequence sizes are known to fit).
// Either model file version loads into either storage: version 5's bf16 parameters
// widen exactly to the fp32 weights (or master weights); version 3's round to nearest
// even for a bf16 run's parameters (said at start).
struct ModelSource {
  Config config;
  std::vector<float> params;      // the fp32 weights (bf16: master); empty: --init, not drawn yet
  std::vector<bf16> bf16_params;  // a bf16 state's parameters, loaded over the rounded ones
};

ModelSource model_source(const Options& o, std::optional<TrainState>& resumed, Storage storage);

// The training and validation tokens and their loaders (which refer to the files: the
// struct stays where it was made), positioned where a resumed state left them.
struct TrainingData {
  TokenFile train_file;
  std::unique_ptr<DataLoader> train;
  uint64_t train_hash = 0;  // of the training tokens, when a state is read or written
  std::optional<TokenFile> val_file;
  std::unique_ptr<DataLoader> val;
};

std::unique_ptr<TrainingData> load_data(const Options& o, const Config& config,
                                        const std::optional<TrainState>& resumed);

// The executor and the kernel plan of the step: built once, for --print-plan and for
// training alike. The plan points into best.json's sections and runs on the executor,
// so the three live together, in place.
struct Kernels {
  Kernels(const Options& o, const Registry& reg, NumericClass precision, const std::vector<Workload>& workloads);
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;

  Backend backend;
  std::unique_ptr<Executor> ex;
  std::optional<BestFile> best;
  std::optional<KernelPlan> plan;
};

// What the batch and sequence sizes must respect once the model is known: its maxT, and
// the sizes the kernels can take at B x T (32-bit row counts, overflow-checked sizes).
void validate_sizes(const Registry& reg, const Config& config, int B, int T, const std::vector<Workload>& workloads);

// A fingerprint of what runs each call: another plan (another device, best.json,
// precision) computes other bits, and a resume on it cannot match the first run.
uint64_t plan_hash(const KernelPlan& plan);

// Whether the step runs as a CUDA graph (--cuda-graph, default on where the backend can
// capture and is a GPU, off with --op-times); UsageError for "on" where the backend
// cannot capture, or with --op-times.
bool use_cuda_graph(const Options& o, const Executor& ex);

// --save: the parameters the forward pass reads, version 3 (fp32) or 5 (bf16, as llm.c
// writes them; the master weights live in --state). params: room for the fp32 ones.
void save_model(const Options& o, const Config& config, const Gpt2& model, std::vector<float>& params);

}  // namespace wb::trainer
