#pragma once
// Which variant runs each op call of the trainer. Every call of a step is a workload
// (op and shape); the plan picks a variant and launch parameters for each, from
// best.json when one is given (the entry for exactly that shape, else the op's entry
// at another shape when its variant can run this one), otherwise the default: the
// highest id of an allowed numeric class that can run the shape. Every fallback is
// announced, and every best.json entry the step does not run is listed with the
// reason. The plan then runs the calls through the registry.
#include <ostream>
#include <string>
#include <typeinfo>
#include <vector>

#include "kernels/registry.h"
#include "trainer/nvtx.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/executor.h"

namespace wb::trainer {

struct Workload {
  std::string op;
  Shape shape;
  int calls = 1;  // per training step
};

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
};

// Why a training step never calls an op that best.json may hold: it runs a fused form.
// Empty for the ops the step runs.
std::string why_the_step_skips(const std::string& op);

class KernelPlan {
 public:
  // Throws UsageError when best.json names an unknown op or variant or illegal launch
  // parameters, or comes from another backend or device. Notices of fallbacks go to
  // `notices`.
  KernelPlan(const Registry& registry, Executor& ex, NumericClass precision, const BestFile* best,
             const std::vector<Workload>& workloads, std::ostream& notices);

  // Runs op at shape with the selected variant; args must be the op's argument struct.
  template <class Args>
  void run(const std::string& op, const Shape& shape, const Args& args) {
    const Selection& s = at(op, shape);
    if (s.variant->args_type != typeid(Args)) throw std::logic_error(op + ": wrong argument struct");
    NvtxRange range(s.op->name.c_str());
    Launch launch;
    launch.params = s.params;
    launch.workspace = workspace_.data();
    launch.workspace_bytes = workspace_.bytes();
    launch.ctx = ex_.context();
    s.variant->run(&args, launch);
  }

  const Selection& at(const std::string& op, const Shape& shape) const;  // std::logic_error when not planned
  const std::vector<Selection>& selections() const { return selections_; }
  // The best.json entries that no call of the step runs, each with the reason.
  const std::vector<UnusedEntry>& unused() const { return unused_; }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }
  void print(std::ostream& out) const;  // the table: op, shape, backend, variant, name, launch, class, origin
  void print_unused(std::ostream& out) const;

 private:
  Executor& ex_;
  std::vector<Selection> selections_;
  std::vector<UnusedEntry> unused_;
  Buffer workspace_;
};

}  // namespace wb::trainer
