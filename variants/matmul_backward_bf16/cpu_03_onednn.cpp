// matmul_backward_bf16, CPU variant 3: two oneDNN bf16 matmuls into an fp32
// accumulator, each output rounded once.
//
// Idea: cpu/2's two products without widening the operands: oneDNN matmul primitives
// read the bf16 matrices as they are stored and accumulate in fp32 (AVX512-BF16's
// `vdpbf16ps` where the CPU has it) into the workspace:
//   acc (B*T x C) = dout (B*T x OC) @ weight (OC x C)               -> dinp = bf16(acc)
//   acc (OC x C)  = dout^T (OC x B*T, dout read transposed) @ inp   -> dweight = bf16(dweight + acc)
// so dinp is rounded once and dweight's accumulation happens in fp32 before its one
// rounding (device/cpu/bf16_lanes.h's branch-free rounding, one SIMD pass each).
// Why it should beat cpu/2: no widening passes, half the bytes of the operands through
// the caches, twice the multiply-adds per instruction of fp32 FMA.
// Measure: build/wb run matmul_backward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768,OC=3072
// for N = 2, 3, interleaved (figures: results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: the workspace holds max(B*T x C, OC x C) floats; oneDNN threads on its own;
// needs oneDNN's bf16 matmul, which Debian 12's oneDNN 2.6 makes only for AVX-512 CPUs.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>

#include "contract/cpu_capabilities.h"
#include "contract/ops/matmul_backward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/onednn.h"
#include "device/cpu/threads.h"

namespace wb::variants {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dim = dnnl::memory::dim;

// acc (M x N, fp32) = a (M x K, bf16, layout a_tag) @ b (K x N, bf16, row-major).
void matmul_f32_out(const bf16* a, tag a_tag, const bf16* b, float* acc, dim M, dim K, dim N) {
  cpu::OneDnn& d = cpu::onednn();
  const dnnl::memory::desc a_md({M, K}, dt::bf16, a_tag), b_md({K, N}, dt::bf16, tag::ab),
      acc_md({M, N}, dt::f32, tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, acc_md), d.engine);
  dnnl::matmul(pd).execute(d.stream, {{DNNL_ARG_SRC, dnnl::memory(a_md, d.engine, const_cast<bf16*>(a))},
                                      {DNNL_ARG_WEIGHTS, dnnl::memory(b_md, d.engine, const_cast<bf16*>(b))},
                                      {DNNL_ARG_DST, dnnl::memory(acc_md, d.engine, acc)}});
  d.stream.wait();
}

std::size_t accumulator_floats(int64_t rows, int64_t C, int64_t OC) { return std::size_t(std::max(rows * C, OC * C)); }

void matmul_backward_bf16_onednn(const MatmulBackwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;
  if (l.workspace_bytes < accumulator_floats(rows, C, OC) * sizeof(float))
    throw std::logic_error("matmul_backward_bf16 cpu/3: workspace too small for the fp32 accumulator");
  auto* acc = static_cast<float*>(l.workspace);
  const int threads = cpu::threads(l);

  matmul_f32_out(a.dout, tag::ab, a.weight, acc, rows, OC, C);
  uint16_t* dinp = cpu::bits_of(a.dinp);
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < rows * C; ++i) dinp[i] = cpu::round_bits(acc[i]);

  matmul_f32_out(a.dout, tag::ba, a.inp, acc, OC, rows, C);  // dout (rows x OC) read as its transpose
  uint16_t* dweight = cpu::bits_of(a.dweight);
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < OC * C; ++i) dweight[i] = cpu::round_bits(cpu::widen(dweight[i]) + acc[i]);
}

void matmul_backward_bf16_onednn_checked(const MatmulBackwardBf16Args& a, const Launch& l) {
  cpu::onednn_call("bf16 matmul", [&] { matmul_backward_bf16_onednn(a, l); });
}

}  // namespace

Variant matmul_backward_bf16_cpu_3() {
  Variant v = cpu::threaded(
      &matmul_backward_bf16_onednn_checked,
      "two oneDNN bf16 matmuls into an fp32 accumulator (dout read transposed for dweight), rounded once");
  v.requirements = {cpu::needs(cpu::Capability::onednn_bf16_matmul)};
  v.workspace = [](const Shape& s, const ParamValues&) {
    return accumulator_floats(s.B * s.T, s.C, s.OC) * sizeof(float);
  };
  return v;
}

}  // namespace wb::variants
