#pragma once
// Which variant runs each op call of a training step. Every call of a step is a
// workload (op and shape); the plan picks a variant and launch parameters for each,
// from best.json when one is given (its section for this device, else the closest one;
// in it the entry for exactly that shape, else the op's entry at another shape when
// its variant can run this one), otherwise the default: the highest id that can run
// the shape here (can_run.h) under the plan's precision. An entry this build or device
// cannot run falls back to the default for its call alone. Every fallback is
// announced, and every entry of the section the step does not run is listed with the
// reason. The plan then runs the calls through the registry. It knows nothing of the
// model: the trainer gives the workloads and why its step never calls some ops.
#include <chrono>
#include <numeric>
#include <ostream>
#include <string>
#include <typeinfo>
#include <vector>

#include <functional>

#include "kernels/registry.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/nvtx.h"
#include "workbench/runtime/workloads.h"

namespace wb {

struct Selection {
  const OpSpec* op = nullptr;
  const Variant* variant = nullptr;
  ParamValues params;
  Shape shape;
  int calls = 0;
  const BestEntry* entry = nullptr;  // the best.json entry it runs, if any
  std::string origin;                // "best.json", or why a default runs
};

// A best.json entry the plan does not run, and why.
struct UnusedEntry {
  const BestEntry* entry = nullptr;
  std::string reason;
  bool other_shape = false;  // only measured at a shape the run does not call
};

struct PlanOptions {
  NumericClass precision = NumericClass::fp32;
  bool strict_device = false;  // refuse best.json unless it has a section for this very device
  bool deterministic = false;  // only variants whose outputs are bitwise repeatable
  // Why the step never calls an op that best.json may hold (it runs a fused form
  // instead), "" for the ops it calls: what only the model knows. Unset: "".
  std::function<std::string(const std::string& op)> why_not_called;
};

class KernelPlan {
 public:
  // Throws UsageError when the section names an unknown op or variant or illegal launch
  // parameters, or (strict_device) when best.json has no section for this device.
  // Notices of the section taken and of fallbacks go to `notices`.
  KernelPlan(const Registry& registry, Executor& ex, const PlanOptions& options, const BestFile* best,
             const std::vector<Workload>& workloads, std::ostream& notices);

  // Runs op at shape with the selected variant; args must be the op's argument struct.
  template <class Args>
  void run(const std::string& op, const Shape& shape, const Args& args) {
    const std::size_t i = index_of(op, shape);
    const Selection& s = selections_[i];
    if (s.variant->args_type != typeid(Args)) throw std::logic_error(op + ": wrong argument struct");
    NvtxRange range(s.op->name.c_str());
    Launch launch;
    launch.params = s.params;
    launch.workspace = workspace_.data();
    launch.workspace_bytes = workspace_.bytes();
    launch.ctx = ex_.context();
    if (!times_ops()) return s.variant->run(&args, launch);
    const auto start = std::chrono::steady_clock::now();
    s.variant->run(&args, launch);
    selection_seconds_[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // The wall time spent inside run() since reset_op_time(), where a call returns when its
  // work is done (cpu, emu); on cuda a launch returns at once, and the ops are not timed.
  // selection_seconds()[i]: the part of it spent in the calls of selections()[i].
  bool times_ops() const { return ex_.backend() != Backend::cuda && timing_; }
  // No more timing (a step replayed as a CUDA graph calls no op).
  void stop_timing_ops() { timing_ = false; }
  double op_seconds() const { return std::accumulate(selection_seconds_.begin(), selection_seconds_.end(), 0.0); }
  const std::vector<double>& selection_seconds() const { return selection_seconds_; }
  void reset_op_time() { selection_seconds_.assign(selections_.size(), 0.0); }

  const Selection& at(const std::string& op, const Shape& shape) const;  // std::logic_error when not planned
  const std::vector<Selection>& selections() const { return selections_; }
  // The best.json section the plan runs (nullptr: none given, or none fits), and how it
  // was chosen.
  const BestSection* section() const { return section_; }
  const std::string& section_choice() const { return section_choice_; }
  // The best.json entries that no call of the step runs, each with the reason.
  const std::vector<UnusedEntry>& unused() const { return unused_; }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }
  void print(std::ostream& out) const;  // the table: op, shape, backend, variant, name, launch, class, origin
  // The unused entries; with all = false those only measured at another shape are one
  // line with their count (a best.json of a larger model has many, and they say nothing
  // of this run), the others a row each.
  void print_unused(std::ostream& out, bool all = true) const;
  // The table of where a step's op time went: per (op, shape), the variant, its calls per
  // step, ms per step and share of the step; seconds[i] is the time of selections()[i]
  // over `steps` steps of step_seconds in all. Sorted by time, longest first.
  void print_times(std::ostream& out, const std::vector<double>& seconds, int steps, double step_seconds) const;

 private:
  std::size_t index_of(const std::string& op, const Shape& shape) const;  // std::logic_error when not planned

  Executor& ex_;
  const BestSection* section_ = nullptr;
  std::string section_choice_;
  std::vector<Selection> selections_;
  std::vector<UnusedEntry> unused_;
  Buffer workspace_;
  std::vector<double> selection_seconds_;
  bool timing_ = true;
};

}  // namespace wb
