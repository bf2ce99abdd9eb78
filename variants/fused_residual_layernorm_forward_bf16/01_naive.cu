// fused_residual_layernorm_forward_bf16, CUDA variant 1: the naive port, one thread per
// row.
//
// Idea: one thread per row adds inp1 and inp2 in fp32 and stores each sum rounded once
// to bf16 (the residual the backward pass will read), then walks the stored residual
// three times as layernorm_forward_bf16 cuda/1 does (mean, variance around it,
// normalise), widening each value and accumulating in fp32; mean and rstd stay fp32.
// The statistics are those of the rounded residual, as the contract says.
// Why: the baseline of the bf16 ladder; plainly correct.
// Limits: neighbouring threads read addresses C values apart, so no load coalesces, and
// only B*T threads exist: slow for any realistic C.
#include <cuda_bf16.h>

#include "contract/ops/fused_residual_layernorm_forward.h"
#include "contract/ops/layernorm_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/layernorm/layernorm.cuh"

namespace wb::variants {
namespace {

__global__ void fused_residual_layernorm_bf16_thread_per_row(__nv_bfloat16* residual, __nv_bfloat16* normed,
                                                             float* mean, float* rstd, const __nv_bfloat16* inp1,
                                                             const __nv_bfloat16* inp2, const __nv_bfloat16* weight,
                                                             const __nv_bfloat16* bias, int rows, int C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const size_t offset = size_t(row) * C;
  __nv_bfloat16* x = residual + offset;
  float sum = 0.0f;
  for (int c = 0; c < C; ++c) {
    x[c] = __float2bfloat16(__bfloat162float(inp1[offset + c]) + __bfloat162float(inp2[offset + c]));
    sum += __bfloat162float(x[c]);
  }
  const float2 stats = cuda::layernorm::normalize_row_serial(x, sum, C, weight, bias, normed + offset);
  mean[row] = stats.x;
  rstd[row] = stats.y;
}

void launch(const FusedResidualLayernormForwardBf16Args& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  WB_LAUNCH(fused_residual_layernorm_bf16_thread_per_row, cuda::grid_for(rows, block), block, 0, cuda::stream(l),
            cuda::as_cuda(a.residual), cuda::as_cuda(a.normed), a.mean, a.rstd, cuda::as_cuda(a.inp1),
            cuda::as_cuda(a.inp2), cuda::as_cuda(a.weight), cuda::as_cuda(a.bias), rows, a.C);
}

}  // namespace

Variant fused_residual_layernorm_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per row: the rounded residual stored, then three fp32 passes over it as the CPU loop";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
