#pragma once
// The harness: a Problem placed on an executor, and the evaluation of one variant
// configuration on it -- validate, validate again (determinism), time (through the
// timer the caller passes) or launch again, validate once more afterwards.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "contract/op.h"
#include "contract/registry.h"
#include "contract/variant.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/problem.h"
#include "workbench/runtime/record.h"
#include "workbench/runtime/timing.h"

namespace wb {

// How a configuration is evaluated after its two validated runs: timed by `timer`
// when one is given (the wb program passes its timing engine; the runtime has none),
// otherwise launched `check_launches` more times untimed. Either way it is validated
// once more afterwards.
// A timer is given one launch, a name and, for a rung that times itself (a PyTorch rung:
// torch_rung.h), the function that runs one timed launch and returns its seconds.
using Timer = std::function<TimingStats(const std::function<void()>& launch, const std::string& name,
                                        const std::function<double()>& own_time)>;

struct EvalOptions {
  Timer timer;
  int check_launches = 3;
};

class Session {
 public:
  // Generates the problem and copies its inputs to the executor. With omit_optional
  // the op's optional tensors (a bias) are passed as null, to variant and reference.
  // With misalign (bytes, a multiple of 4 below 16), every tensor on the executor
  // starts that far off a 16-byte boundary: a variant with vector accesses must then
  // skip (Unsupported) or fall back to scalar code, never fault.
  // The registry gives the reference and the emulated twins that plan launches.
  Session(const Registry& registry, const OpSpec& op, const Shape& shape, uint64_t seed, Executor& ex,
          bool omit_optional = false, std::size_t misalign = 0);

  // Never throws for a variant's own failures (a wrong result, a CUDA error): they
  // come back as an incorrect record with the reason. After a sticky fault the
  // executor is lost (Executor::lost()); every later evaluation comes back not_run,
  // "device lost: <fault>", without touching the device.
  Record evaluate(const Variant& v, const ParamValues& params, const EvalOptions& options);

  const Problem& problem() const { return problem_; }

 private:
  Record evaluate_once(const Variant& v, const ParamValues& params, const EvalOptions& options);
  struct Outcome {
    std::vector<TensorCheck> checks;
    std::string failure;  // empty when every check passed
  };
  // Restores inouts, poisons outputs, runs once, downloads and compares; keeps the
  // downloaded outputs in last_.
  Outcome run_and_check(const Variant& v, const Launch& launch);
  // Runs v once on table: its launcher on the argument struct, or a PyTorch rung in
  // PyTorch's process (torch_rung.h).
  void invoke(const Variant& v, const TensorTable& table, const Launch& launch);

  const Registry& registry_;
  const OpSpec& op_;
  Problem problem_;
  Executor& ex_;
  ExecutorTensors on_device_;
  HostTensors last_;     // outputs of the latest run (checked tensors only are meaningful)
  HostTensors scratch_;  // downloads of inputs, to see that a variant left them alone
};

// Throws UsageError, naming the op and its dims, when the shape is not valid for the op
// or a Session of it cannot fit: the host holds five sets of its tensors (inputs,
// reference outputs, the downloads of the runs) and, on cpu and emu, the executor's
// sixth; a CUDA device holds one set. The Session checks this before allocating;
// commands call it first to refuse a shape before any other work.
void check_session_fits(const OpSpec& op, const Shape& shape, const Executor& ex);

// "device lost: <fault>": the reason of every configuration not run after a fault.
std::string device_lost_reason(const std::string& fault);

// A configuration never attempted because the device was lost to `fault` (status
// not_run), for the configurations a command had planned but could not place on the
// device any more.
Record not_run_record(const OpSpec& op, const Variant& v, const ParamValues& params, const Shape& shape,
                      bool omit_optional, uint64_t seed, const std::string& fault);

// A record with the identity of v and the models of op at shape filled in.
Record record_for(const OpSpec& op, const Variant& v, const ParamValues& params, const Shape& shape);

}  // namespace wb
