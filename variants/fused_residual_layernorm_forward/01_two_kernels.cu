// fused_residual_layernorm_forward, CUDA variant 1: the two ops back to back.
//
// Idea: what the step does without fusion. A residual kernel (one thread per
// element) writes residual = inp1 + inp2; then a layernorm kernel (one warp per row,
// mean, variance around it, normalise; layernorm_forward cuda/3's kernel, from
// variants/layernorm/layernorm_warp_per_row.cuh) reads the residual back and writes
// normed, mean and rstd.
// Why: the baseline the fused variants are measured against; each kernel is simple
// and coalesced.
// Limits: two launches, and the residual makes a round trip through memory (written
// by the first kernel, read back by the second: 3 row reads in the layernorm kernel,
// the first from DRAM or L2). Scalar 32-bit accesses.
#include "contract/ops/fused_residual_layernorm_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/layernorm/layernorm_warp_per_row.cuh"

namespace wb::variants {
namespace {

__global__ void residual_add(float* residual, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) residual[i] = inp1[i] + inp2[i];
}

void launch(const FusedResidualLayernormForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int64_t n = int64_t(rows) * a.C;
  const int block = l.block_size();
  const cudaStream_t s = cuda::stream(l);
  WB_LAUNCH(residual_add, cuda::grid_for(n, block), block, 0, s, a.residual, a.inp1, a.inp2, n);
  const int rows_per_block = block / cuda::kWarpSize;
  WB_LAUNCH(cuda::layernorm::warp_per_row, cuda::grid_for(rows, rows_per_block), block, 0, s, a.normed, a.mean, a.rstd,
            a.residual, a.weight, a.bias, rows, a.C);
}

}  // namespace

Variant fused_residual_layernorm_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "unfused: a residual kernel (thread per element), then a warp-per-row layernorm kernel";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
