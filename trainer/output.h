#pragma once
// What a run prints and logs: the kernel plan (--print-plan, and the table at start),
// the header, a line per step and its JSON object in the log (--log), and the summary
// with where the op time went (--op-times).
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "trainer/gpt2.h"
#include "trainer/model.h"
#include "trainer/options.h"
#include "trainer/phases.h"
#include "trainer/state.h"
#include "workbench/runtime/kernel_plan.h"

namespace wb::trainer {

void print_plan(const Options& o, const Config& config, NumericClass precision, const Kernels& k);

// What the run prints before its first step; returns the peak that MFU is taken
// against (given, or the measured GEMM ceiling of the precision).
double print_header(const Options& o, const Config& config, NumericClass precision, Kernels& k, const Gpt2& model);

// One step as printed and logged.
struct StepRecord {
  int step = 0;
  float loss = 0, grad_norm = 0, lr = 0;
  double seconds = 0, tokens_per_s = 0, mfu = 0;
  std::optional<float> val_loss;
  int memsets = 0;
  const char* graph = nullptr;                        // --cuda-graph: launched, captured or replayed
  std::optional<double> op_seconds, outside_seconds;  // where the plan times the step's ops
};

// The step's line: loss, norm, learning rate, time, throughput, MFU (and validation loss).
void print_step(const Options& o, const StepRecord& r);

// The log (--log): one JSON object per step, written as the steps go (a killed run
// keeps its lines, and a resume trims them to its state); each line is flushed at once,
// and a failed write (a full disk, the file size limit) stops the run with exit 2
// instead of leaving a log that silently ends early.
class StepLog {
 public:
  StepLog(const Options& o, const std::optional<TrainState>& resumed);
  bool enabled() const { return !path_.empty(); }
  void write(const StepRecord& r);
  void flush();

 private:
  std::string path_;
  std::ofstream out_;
};

// What the timed steps add up to (the first step of a run warms up and is not timed,
// unless it is the only one).
struct StepTotals {
  int first_timed = 0;
  int timed_steps = 0;
  double seconds = 0, outside_seconds = 0;
  std::vector<double> selection_seconds;  // per selection of the plan
  float loss = 0;                         // of the last step
};

void print_summary(const Options& o, const Config& config, const Gpt2& model, const KernelPlan& plan,
                   double peak_tflops, const StepTotals& t);

}  // namespace wb::trainer
