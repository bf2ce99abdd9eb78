// attention_backward_bf16, CUDA variant 1: the naive port on bf16 storage -- one
// thread per row of the gradient, everything recomputed where it is needed, the sums
// in an fp32 copy of dqkv in the workspace.
//
// Idea: attention_backward cuda/1 with every load widened (__bfloat162float) and all
// arithmetic in fp32. Kernel 1: one thread per (b, h, t) owns dq_t: for every key
// t2 <= t it recomputes the score, p = exp(s - lse_t), dp = dout_t . v_t2 and
// ds = p * (dp - D_t) with D_t = dout_t . out_t, and adds scale * ds * k_t2 into dq_t.
// Kernel 2: one thread per (b, h, t2) owns dk_t2 and dv_t2: for every query t >= t2
// it recomputes D_t, the score, p, dp and ds, and adds scale * ds * q_t into dk_t2
// and p * dout_t into dv_t2. The fp32 kernel accumulates in place in dqkv; on bf16
// storage that would round at every addition, so both kernels accumulate into an fp32
// (B, T, 3C) workspace laid out as dqkv (each element zeroed and summed by the one
// thread that owns it), and kernel 3 rounds every element into dqkv once.
// Why: the baseline of the bf16 ladder; plainly correct, nothing shared, nothing tiled,
// deterministic.
// Limits: those of the fp32 naive port (every score and dot product recomputed twice,
// D_t once per pair in kernel 2, neighbouring threads reading rows 3C elements apart,
// accumulators in global memory with a read-modify-write of hs floats per pair, very
// unequal work along the causal loops); plus 12 B*T*C bytes of workspace and a third
// pass over dqkv.
#include <cuda_bf16.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>

#include "contract/ops/attention_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention/attention_backward_naive.cuh"

namespace wb::variants {
namespace {

// One thread per element: dqkv = bf16(acc), the one rounding of every gradient.
__global__ void round_into_bf16(__nv_bfloat16* dqkv, const float* acc, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dqkv[i] = __float2bfloat16(acc[i]);
}

std::size_t accumulator_bytes(const Shape& s) { return std::size_t(s.B * s.T * 3 * s.C) * sizeof(float); }

void launch(const AttentionBackwardBf16Args& a, const Launch& l) {
  const int64_t elements = int64_t(a.B) * a.T * 3 * a.C;
  if (l.workspace_bytes < std::size_t(elements) * sizeof(float))
    throw std::logic_error("attention_backward_bf16 cuda/1: workspace too small for the fp32 accumulator");
  float* acc = static_cast<float*>(l.workspace);  // (B, T, 3C)
  cuda::naive_attention_backward::launch(acc, cuda::as_cuda(a.dout), cuda::as_cuda(a.qkv), cuda::as_cuda(a.out), a.lse,
                                         a.B, a.T, a.C, a.NH, l);
  const int block = l.block_size();
  WB_LAUNCH(round_into_bf16, cuda::grid_for(elements, block), block, 0, cuda::stream(l), cuda::as_cuda(a.dqkv), acc,
            elements);
}

}  // namespace

Variant attention_backward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary =
      "one thread per (b, h, t) for dq and one per (b, h, t2) for dk and dv, all recomputed, fp32 sums in a "
      "workspace copy of dqkv, each gradient rounded once";
  v.params = {block_size_param()};
  v.workspace = [](const Shape& s, const ParamValues&) { return accumulator_bytes(s); };
  return v;
}

}  // namespace wb::variants
