// matmul_forward_bf16, CPU variant 4: oneDNN's bf16 matmul.
//
// Idea: one oneDNN matmul primitive (device/cpu/onednn.h's bf16_matmul): src inp
// (rows x C, bf16), weights (C x OC, the (OC, C) weight read transposed, bf16), bias
// (1 x OC, bf16), dst (rows x OC, bf16); oneDNN accumulates in fp32 and rounds each
// output once. On a CPU with AVX512-BF16 it runs `vdpbf16ps` micro-kernels, two bf16
// products per fp32 lane per instruction; on other AVX-512 CPUs it converts to fp32;
// Debian 12's oneDNN 2.6 makes none for a CPU without AVX-512, where the rung is skipped
// with oneDNN's reason (device/cpu/onednn.h). The primitive is made from its
// descriptor on every call; oneDNN's primitive cache makes that a lookup after the
// first call at a shape. This is the library PyTorch's CPU bf16 matmuls run on.
// Why it should beat variant 3 (the hand-written vdpbf16ps GEMM): kernels generated for
// the CPU at run time, blocked along C, panels prefetched and packed with vector
// shuffles (variant 3's header has the command that measures both; figures in
// results/cpu-amd-epyc-avx512bf16/README.md). Against variant 2: no widening or
// rounding passes, half the bytes through
// the caches, and twice the multiply-adds per instruction of fp32 FMA.
// Limits: oneDNN's own threading (its OpenMP build on Debian, sharing wb's team); the
// engine and stream are made once per process.
#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>

#include "contract/cpu_capabilities.h"
#include "contract/ops/matmul_forward.h"
#include "contract/variant.h"
#include "device/cpu/onednn.h"

namespace wb::variants {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

void matmul_bf16_onednn(const MatmulForwardBf16Args& a, const Launch&) {
  // weight (OC, C) row-major is the (C x OC) weights read as their transpose.
  cpu::bf16_matmul(a.inp, tag::ab, a.weight, tag::ba, a.bias, a.out, dt::bf16, int64_t(a.B) * a.T, a.C, a.OC);
}

}  // namespace

Variant matmul_forward_bf16_cpu_4() {
  Variant v = Variant::of(&matmul_bf16_onednn);
  v.summary = "oneDNN bf16 matmul (fp32 accumulation, bias fused, one rounding): AVX512-BF16 where the CPU has it";
  v.requirements = {cpu::needs(cpu::Capability::onednn_bf16_matmul)};
  return v;
}

}  // namespace wb::variants
