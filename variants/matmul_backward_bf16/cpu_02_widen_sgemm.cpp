// matmul_backward_bf16, CPU variant 2: widen to fp32, two OpenBLAS sgemm calls, round once.
//
// Idea: as matmul_forward_bf16's cpu/2: widen dout, inp and weight to fp32 (exact),
// then the two products of matmul_backward's cpu/3 on the fp32 copies:
//   dinp32    (B*T x C)  = dout32 (B*T x OC) @ weight32 (OC x C)     beta = 0
//   dweight32 (OC x C)   = widened dweight + dout32^T @ inp32         beta = 1
// and every output rounded once to nearest even (dweight: the old value plus the new
// sum, one rounding, as the reference port accumulates).
// Why it should beat the reference port: the port's sums run in scalar double over a
// strided operand (at the classifier of GPT-2's vocabulary it was about 95% of the
// trainer's bf16 step on this CPU); OpenBLAS's packed, vectorised sgemm runs on every core.
// Limits: fp32 accumulation where the port sums in double (the tolerance of the cuBLAS
// variant, which also accumulates in fp32, covers it); three widening passes and the
// rounding pass, and twice the bytes of bf16 through the caches. The fp32 buffers are
// the calling thread's, kept between calls (grown as needed).
#include <cstdint>
#include <vector>

#include "contract/ops/matmul_backward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/sgemm.h"

namespace wb::variants {
namespace {

void round_to_bf16(const float* from, bf16* to, int64_t n) {
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) to[i] = to_bf16(from[i]);
}

void matmul_backward_bf16_widen_sgemm(const MatmulBackwardBf16Args& a, const Launch&) {
  const int rows = a.B * a.T;
  const int64_t n_dout = int64_t(rows) * a.OC, n_inp = int64_t(rows) * a.C, n_weight = int64_t(a.OC) * a.C;
  // The calling thread's buffers, named by pointer inside the parallel loops (there a
  // thread_local would be each OpenMP thread's own).
  thread_local std::vector<float> dout_buffer, inp_buffer, weight_buffer, dinp_buffer, dweight_buffer;
  dout_buffer.resize(n_dout);
  inp_buffer.resize(n_inp);
  weight_buffer.resize(n_weight);
  dinp_buffer.resize(n_inp);
  dweight_buffer.resize(n_weight);
  float *dout = dout_buffer.data(), *inp = inp_buffer.data(), *weight = weight_buffer.data();
  float *dinp = dinp_buffer.data(), *dweight = dweight_buffer.data();
  cpu::widen_all(a.dout, dout, n_dout);
  cpu::widen_all(a.inp, inp, n_inp);
  cpu::widen_all(a.weight, weight, n_weight);
  cpu::widen_all(a.dweight, dweight, n_weight);
  cpu::sgemm(CblasNoTrans, CblasNoTrans, rows, a.C, a.OC, dout, weight, 0.0f, dinp);
  cpu::sgemm(CblasTrans, CblasNoTrans, a.OC, a.C, rows, dout, inp, 1.0f, dweight);
  round_to_bf16(dinp, a.dinp, n_inp);
  round_to_bf16(dweight, a.dweight, n_weight);
}

}  // namespace

Variant matmul_backward_bf16_cpu_2() {
  Variant v = Variant::of(&matmul_backward_bf16_widen_sgemm);
  v.summary = "widen dout, inp, weight and dweight to fp32, two OpenBLAS sgemm calls, each output rounded once";
  return v;
}

}  // namespace wb::variants
