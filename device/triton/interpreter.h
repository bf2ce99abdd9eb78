#pragma once
// A Triton rung on the emu backend: its kernels run under Triton's interpreter
// (tools/triton/interpret.py, docs/triton.md) on the tensors the harness placed in the
// emulated device memory, so that a Triton rung is checked against the same reference,
// with the same fresh inputs, poisoned outputs and check shapes as every emulated CUDA
// rung. The generated variant of each rung (tools/triton/cxx.py) builds one call per
// launch of the variant:
//
//   triton::InterpretedCall call("variants/gelu_forward/03_triton_sigmoid.py", launch);
//   call.pointer("out", "*fp32", a.out);
//   call.integer("N", a.N);
//   call.run();
//
// run() copies every tensor out of device memory (each pointer to the end of its
// allocation: the argument struct carries no sizes), hands them to one interpret.py
// process per wb process (started on first use, `--serve`: Python, torch and triton
// start once), and copies them back, so that whatever the rung wrote, and only that,
// changes. Throws Unsupported when the interpreter cannot start here (no venv: the
// reason names the fix), std::runtime_error when the rung failed under it (it raised,
// or wrote outside a tensor), which the harness records as incorrect.
//
// The interpreter runs a grid's programs one after another, always in the same order:
// a second run on the same inputs can only repeat the first. So a call whose rung,
// fields, parameters and tensors are byte for byte those of one of the rung's last four
// calls takes that call's outputs without running again (the harness's second and third
// runs of a configuration), as docs/triton.md says.
#include <cstdint>
#include <string>
#include <vector>

#include "contract/variant.h"

namespace wb::triton {

class InterpretedCall {
 public:
  // rung: the rung's path relative to the repository; launch: its parameters.
  InterpretedCall(std::string rung, const Launch& launch);
  // A pointer field: its name, its type as the rung declares it ("*fp32", "*bf16",
  // "*i32") and the device pointer.
  void pointer(const char* field, const char* type, const void* p);
  void integer(const char* field, std::int64_t value);
  void real(const char* field, double value);
  void run();

 private:
  struct Tensor {
    std::string field, type;
    char* data;
    std::size_t bytes;
  };
  std::string rung_;
  const Launch& launch_;
  std::vector<Tensor> tensors_;
  std::string fields_json_;  // "\"B\": 3, \"T\": 43"
};

}  // namespace wb::triton
