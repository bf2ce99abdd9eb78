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
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <ostream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "contract/registry.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/can_run.h"
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

// The variant a call runs without best.json: the highest id that can run `shape` on
// device `d` under `f` with its default launch parameters; null when none can.
const Variant* default_variant(const Registry& reg, const std::string& op, const DeviceInfo& d, const RunFilter& f,
                               const Shape& shape);

// What a plan selects for each workload, without running anything: the choice of the
// best.json section for `device` and of each call's variant (KernelPlan's, also what
// wb predict predicts a step by). Notices as KernelPlan's.
struct PlanSelections {
  std::vector<Selection> selections;  // one per workload, in order
  const BestSection* section = nullptr;
  std::string section_choice;
  std::size_t workspace = 0;                         // the most any selection needs
  std::map<const BestEntry*, std::string> rejected;  // entries tried and refused, and why
};
PlanSelections select_kernels(const Registry& reg, const DeviceInfo& device, Backend backend, const PlanOptions& o,
                              const BestFile* best, const std::vector<Workload>& workloads, std::ostream& notices);

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
    if (!timing_step_) return s.variant->run(&args, launch);
    // A marker pair around the call; the cursor moves only once both are recorded.
    const std::size_t k = timed_calls_;
    if (k == timed_selection_.size())
      throw std::logic_error(op + ": the step made more op calls than the " + std::to_string(k) +
                             " its workloads count (the plan's markers are sized from them)");
    markers_->record(2 * k);
    s.variant->run(&args, launch);
    markers_->record(2 * k + 1);
    timed_selection_[k] = i;
    timed_calls_ = k + 1;
  }

  // Op times: how long each op call of a step took, on every backend. Between
  // begin_op_times() and collect_op_times() run() records a marker (Executor::
  // make_markers) before and after each call: on cuda CUDA events on the stream, so a
  // call's time runs from the GPU reaching the marker before its launches to the one
  // after them; on cpu and emu, whose calls return when their work is done, the steady
  // clock. The markers are made once, for the calls a step makes (Selection::calls, over
  // all selections); a step that makes more is std::logic_error. Calls outside the pair
  // (a validation pass, a sample) are not timed.
  bool times_ops() const { return timing_; }
  // No more timing, and the markers are released (a step replayed as a CUDA graph calls
  // no op; a marker cannot be recorded inside a capture).
  void stop_timing_ops() {
    timing_ = false;
    timing_step_ = false;
    markers_.reset();
  }
  // Starts timing a step's calls (a no-op after stop_timing_ops()); the times of the
  // last step are forgotten.
  void begin_op_times() {
    selection_seconds_.assign(selections_.size(), 0.0);
    timed_calls_ = 0;
    timing_step_ = timing_;
  }
  // Ends the step's timing and adds each call's time to its selection's: call it after
  // the synchronisation that ends the step (the trainer's read-back of the loss and
  // norm), where on cuda reading the markers waits for nothing.
  void collect_op_times();
  // The time of the op calls of the last step collected; selection_seconds()[i]: the
  // part of it spent in the calls of selections()[i].
  double op_seconds() const { return std::accumulate(selection_seconds_.begin(), selection_seconds_.end(), 0.0); }
  const std::vector<double>& selection_seconds() const { return selection_seconds_; }
  // The calls timed since begin_op_times().
  std::size_t timed_calls() const { return timed_calls_; }

  Backend backend() const { return ex_.backend(); }
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
  bool timing_ = true;                        // until stop_timing_ops()
  bool timing_step_ = false;                  // between begin_op_times() and collect_op_times()
  std::unique_ptr<Markers> markers_;          // two per call of a step
  std::vector<std::size_t> timed_selection_;  // [k]: the selection of the step's k-th timed call
  std::size_t timed_calls_ = 0;
};

}  // namespace wb
