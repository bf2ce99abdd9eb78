// layernorm_backward_bf16, CUDA variant 1: the naive port, two kernels.
//
// Idea: layernorm_backward cuda/1 on bf16 storage. Kernel 1: one thread per row walks
// its C channels twice, widening each bf16 -- once for the two row means (of g = weight
// * dout and of g * n, n the normalised input), once to update dinp: the new value is
// bf16(old + (g - mean(g) - n * mean(g n)) * rstd), one rounding. Kernel 2: one thread
// per channel walks all B*T rows, sums n * dout and dout in fp32, and rounds dweight
// and dbias once from old + sum.
// Why: the baseline of the bf16 ladder; no atomics, deterministic.
// Limits: kernel 1 does not coalesce (threads C values apart) and runs only B*T
// threads; kernel 2 runs only C threads, each a long sequential sum; inp and dout are
// read three times in all.
#include <cuda_bf16.h>

#include "contract/ops/layernorm_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void dinp_bf16_thread_per_row(__nv_bfloat16* dinp, const __nv_bfloat16* dout, const __nv_bfloat16* inp,
                                         const __nv_bfloat16* weight, const float* mean, const float* rstd, int rows,
                                         int C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const size_t offset = size_t(row) * C;
  const float m = mean[row], s = rstd[row];
  float g_sum = 0.0f, gn_sum = 0.0f;
  for (int c = 0; c < C; ++c) {
    const float g = __bfloat162float(weight[c]) * __bfloat162float(dout[offset + c]);
    g_sum += g;
    gn_sum += g * (__bfloat162float(inp[offset + c]) - m) * s;
  }
  const float g_mean = g_sum / C, gn_mean = gn_sum / C;
  for (int c = 0; c < C; ++c) {
    const float n = (__bfloat162float(inp[offset + c]) - m) * s;
    const float g = __bfloat162float(weight[c]) * __bfloat162float(dout[offset + c]);
    dinp[offset + c] = __float2bfloat16(__bfloat162float(dinp[offset + c]) + (g - g_mean - n * gn_mean) * s);
  }
}

__global__ void dweight_dbias_bf16_thread_per_channel(__nv_bfloat16* dweight, __nv_bfloat16* dbias,
                                                      const __nv_bfloat16* dout, const __nv_bfloat16* inp,
                                                      const float* mean, const float* rstd, int rows, int C) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float dw = 0.0f, db = 0.0f;
  for (int row = 0; row < rows; ++row) {
    const size_t i = size_t(row) * C + c;
    const float d = __bfloat162float(dout[i]);
    dw += (__bfloat162float(inp[i]) - mean[row]) * rstd[row] * d;
    db += d;
  }
  dweight[c] = __float2bfloat16(__bfloat162float(dweight[c]) + dw);
  dbias[c] = __float2bfloat16(__bfloat162float(dbias[c]) + db);
}

void launch(const LayernormBackwardBf16Args& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const cudaStream_t s = cuda::stream(l);
  WB_LAUNCH(dinp_bf16_thread_per_row, cuda::grid_for(rows, block), block, 0, s, cuda::as_cuda(a.dinp),
            cuda::as_cuda(a.dout), cuda::as_cuda(a.inp), cuda::as_cuda(a.weight), a.mean, a.rstd, rows, a.C);
  WB_LAUNCH(dweight_dbias_bf16_thread_per_channel, cuda::grid_for(a.C, block), block, 0, s, cuda::as_cuda(a.dweight),
            cuda::as_cuda(a.dbias), cuda::as_cuda(a.dout), cuda::as_cuda(a.inp), a.mean, a.rstd, rows, a.C);
}

}  // namespace

Variant layernorm_backward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "thread per row for dinp, thread per channel for dweight and dbias, fp32 sums, each gradient rounded once";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
