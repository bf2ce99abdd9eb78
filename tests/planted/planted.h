#pragma once
// The test-only variants with planted faults (tests/planted/) and a registry holding
// them beside every variant of this build's own.
#include <vector>

#include "contract/registry.h"

std::vector<wb::Variant> planted_cpu_variants();  // cpu/90 dies by SIGSEGV
std::vector<wb::Variant> planted_emu_variants();  // emu/90 faults out of bounds, emu/91 is correct
// Triton rungs with planted faults, on emu (under the interpreter): softmax_forward
// emu/94 and 95, attention_forward_bf16 emu/90 (tests/planted/planted_triton.cpp).
std::vector<wb::Variant> planted_triton_variants();
// PyTorch rungs with planted faults, on cpu: gelu_forward, layernorm_forward and
// layernorm_forward_bf16 cpu/92 (tests/planted/planted_torch.cpp).
std::vector<wb::Variant> planted_torch_variants();
#if WB_HAVE_CUDA
std::vector<wb::Variant> planted_cuda_variants();  // cuda/90 and cuda/91, the same on a GPU
#endif

namespace wb::testing {

// Registry::global() plus the planted variants (backend emu for the emulated build).
const Registry& planted_registry();

}  // namespace wb::testing
