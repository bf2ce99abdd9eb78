// layernorm_forward, CUDA variant 3: one warp per row, warp-level reductions.
//
// Idea: the 32 lanes of a warp stride over one row (coalesced), and the mean and the
// variance are reduced with register shuffles: no shared memory, no __syncthreads,
// one launch. A block of block_size threads handles block_size/32 rows. The kernel
// lives in variants/layernorm/layernorm_warp_per_row.cuh (fused_residual_layernorm_forward cuda/1
// runs it too).
// Why it should beat variant 2: one launch instead of three and no round trip of the
// statistics through global memory; the second and third reads of the row mostly hit
// L1/L2.
// Limits: still three passes over the row (mean, variance, output) and scalar
// 32-bit loads.
#include "contract/ops/layernorm_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/layernorm/layernorm_warp_per_row.cuh"

namespace wb::variants {
namespace {

void launch(const LayernormForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const int rows_per_block = block / cuda::kWarpSize;
  WB_LAUNCH(cuda::layernorm::warp_per_row, cuda::grid_for(rows, rows_per_block), block, 0, cuda::stream(l), a.out, a.mean,
            a.rstd, a.inp, a.weight, a.bias, rows, a.C);
}

}  // namespace

Variant layernorm_forward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary = "one warp per row, mean and variance reduced with warp shuffles, one launch";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
