#pragma once
// A PyTorch rung (variants/<op>/torch.py, docs/torch.md) run by the harness: the op as a
// PyTorch user writes it, eager or through torch.compile, in PyTorch's own process
// (tools/torch/serve.py --serve, one per wb process, python/serve_process.h).
//
// A call hands PyTorch the op's tensors by name, as the table holds them (inputs with
// their fresh values, outputs poisoned, inouts at their initial values), with every
// shape dim and the op's scalars; PyTorch loads them onto its device once (prepare).
// run() calls the rung once and copies what it returned for every output and inout back
// into the table's tensors, so the harness validates them as any rung's; time() calls
// it once more, timed where it runs (the steady clock on cpu, CUDA events on cuda), and
// changes nothing in the table. So a sweep times the rung's work, not the copies and
// the round trip between the processes.
//
// Throws Unsupported where PyTorch cannot run here (no venv: the reason names the fix),
// std::runtime_error when the rung failed (it raised, or returned what the contract
// does not hold: the harness records it as incorrect), std::logic_error when wb and
// the server disagree on the protocol (a bug).
#include <filesystem>
#include <mutex>
#include <string>

#include "contract/op.h"
#include "contract/variant.h"
#include "workbench/runtime/executor.h"

namespace wb {

class TorchCall {
 public:
  // Holds PyTorch's process for the call's life: calls never interleave.
  TorchCall(const Variant& v, const TensorTable& table, const ParamValues& params, Executor& ex);
  ~TorchCall();
  TorchCall(const TorchCall&) = delete;
  TorchCall& operator=(const TorchCall&) = delete;

  void run();
  double time();

 private:
  std::string ask(const std::string& request);

  const Variant& variant_;
  const TensorTable& table_;
  Executor& ex_;
  std::filesystem::path scratch_;
  std::unique_lock<std::mutex> lock_;
};

// The version PyTorch's process reports ("2.11.0"), starting it; throws Unsupported as
// TorchCall does.
std::string torch_version();

}  // namespace wb
