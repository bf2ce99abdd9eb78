// matmul_forward_bf16, CPU variant 2: widen to fp32, OpenBLAS sgemm, round once.
//
// Idea: the portable route to a fast bf16 product on a CPU without bf16 instructions:
// widen inp and weight to fp32 (exact), broadcast the bias into an fp32 output, one
// sgemm (out32 = inp32 @ weight32^T + out32), then round every output once to bf16.
// The fp32 buffers are the calling thread's, kept between calls (grown as needed).
// Why it should beat the reference port: OpenBLAS's packed, vectorised sgemm on every
// core instead of scalar double loops.
// Limits: the widening and the rounding are two extra passes over the operands and the
// output, and twice the bytes of bf16 through the caches: the bf16 instructions of
// cpu/3 (oneDNN) avoid both. Debian's OpenBLAS has no sbgemm.
#include <cstdint>
#include <vector>

#include "contract/ops/matmul_forward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/sgemm.h"

namespace wb::variants {
namespace {

void matmul_bf16_widen_sgemm(const MatmulForwardBf16Args& a, const Launch&) {
  const int rows = a.B * a.T;
  const int64_t n_inp = int64_t(rows) * a.C, n_weight = int64_t(a.OC) * a.C, n_out = int64_t(rows) * a.OC;
  // The calling thread's buffers, named by pointer inside the parallel loops (there a
  // thread_local would be each OpenMP thread's own).
  thread_local std::vector<float> inp_buffer, weight_buffer, out_buffer;
  inp_buffer.resize(n_inp);
  weight_buffer.resize(n_weight);
  out_buffer.resize(n_out);
  float *inp = inp_buffer.data(), *weight = weight_buffer.data(), *out = out_buffer.data();
  cpu::widen_all(a.inp, inp, n_inp);
  cpu::widen_all(a.weight, weight, n_weight);
  cpu::sgemm_bt_bias(out, inp, weight, a.bias, rows, a.C, a.OC);
#pragma omp parallel for
  for (int64_t i = 0; i < n_out; ++i) a.out[i] = to_bf16(out[i]);
}

}  // namespace

Variant matmul_forward_bf16_cpu_2() {
  Variant v = Variant::of(&matmul_bf16_widen_sgemm);
  v.summary = "widen inp and weight to fp32, bias broadcast, one OpenBLAS sgemm, each output rounded once";
  return v;
}

}  // namespace wb::variants
