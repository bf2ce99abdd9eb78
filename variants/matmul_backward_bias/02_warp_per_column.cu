// matmul_backward_bias, CUDA variant 2: one warp per column.
//
// Idea: each warp sums one column of dout (B*T rows, OC columns): its lanes stride over
// the rows, then a shuffle reduction gives the column sum, which lane 0 adds to
// dbias[o]; a block of block_size threads handles block_size / 32 neighbouring
// columns. The order of every addition is fixed: deterministic.
// Why it should beat variant 1: no shared memory and no __syncthreads in the
// reduction, and a block's warps read neighbouring columns, so the sectors one warp
// fetches are partly used by its neighbours while they are still in L1/L2.
// Limits: a warp's own loads are still one per row, OC floats apart (uncoalesced);
// with OC = 3072 there are only 3072 warps in all, each walking 8192 rows serially
// (256 loads per lane) -- latency-bound.
#include <cstdint>

#include "contract/ops/matmul_backward_bias.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

// grid ceil(OC / (block / 32)), block: a multiple of 32 up to 1024.
__global__ void bias_warp_per_column(float* dbias, const float* dout, int rows, int OC) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int o = blockIdx.x * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (o >= OC) return;  // o is the same for the 32 lanes of a warp: whole warps leave
  float acc = 0.0f;
  for (int64_t r = lane; r < rows; r += cuda::kWarpSize) acc += dout[r * OC + o];
  acc = cuda::warp_sum(acc);  // all 32 lanes take part
  if (lane == 0) dbias[o] += acc;
}

void launch(const MatmulBackwardBiasArgs& a, const Launch& l) {
  const int block = l.block_size();
  const int columns_per_block = block / cuda::kWarpSize;
  WB_LAUNCH(bias_warp_per_column, cuda::grid_for(a.OC, columns_per_block), block, 0, cuda::stream(l), a.dbias, a.dout,
            a.B * a.T, a.OC);
}

}  // namespace

Variant matmul_backward_bias_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "one warp per column, lanes stride over the rows, shuffle reduction";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
