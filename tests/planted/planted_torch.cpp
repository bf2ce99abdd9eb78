// Test-only PyTorch rungs with planted faults (tests/torch/planted/, docs/torch.md),
// registered on the cpu backend beside the build's own: `wb check --backend cpu` runs
// them in PyTorch's process through the same client as every PyTorch rung
// (workbench/runtime/torch_rung.h), so that the check is shown to call them INCORRECT
// while the ops' own rungs pass beside them. Their ids (9x) keep them apart from 80/81.
#include "contract/registry_table.h"
#include "tests/planted/planted.h"

namespace {

wb::Variant planted(const char* op, int id, const char* name, const char* source, const char* summary) {
  const wb::TorchRungFile file{op, source, summary, "planted"};
  wb::Variant v = wb::torch_rung_variant(*wb::Registry::global().find_op(op), file, wb::Backend::cpu, false);
  v.id = id;
  v.name = name;
  v.summary = summary;
  return v;
}

}  // namespace

std::vector<wb::Variant> planted_torch_variants() {
  return {
      planted("gelu_forward", 92, "planted_torch_erf", "tests/torch/planted/gelu_forward/torch.py",
              "test only: PyTorch's exact erf GELU where the contract is the tanh form"),
      planted("layernorm_forward_bf16", 92, "planted_torch_returns_fp32",
              "tests/torch/planted/layernorm_forward_bf16/torch.py",
              "test only: a bf16 layernorm returning its output in float32"),
      planted("layernorm_forward", 92, "planted_torch_no_statistics", "tests/torch/planted/layernorm_forward/torch.py",
              "test only: a layernorm returning out without mean and rstd")};
}
