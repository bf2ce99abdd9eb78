// matmul_backward_bias, CUDA variant 1: one block per column.
//
// Idea: block o sums column o of dout (B*T rows, OC columns): its threads stride over
// the rows, each keeping a running sum in its own order, then a block reduction (warp
// shuffles, then one warp over the per-warp sums) gives the column sum, which thread 0
// adds to dbias[o]. The order of every addition is fixed: deterministic.
// Why: the naive port of the CPU loop onto the GPU, with the reduction over rows that
// the loop does serially spread over a block.
// Limits: the threads of a warp read 32 different rows of one column, OC floats apart:
// every load is its own 32-byte sector of which 4 bytes are used, so the kernel moves
// about eight times the bytes it needs; one block per column and a __syncthreads-bound
// reduction at the end.
#include <cstdint>

#include "contract/ops/matmul_backward_bias.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

// grid OC, block: any multiple of 32 up to 1024.
__global__ void bias_block_per_column(float* dbias, const float* dout, int rows, int OC) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const int o = blockIdx.x;
  float acc = 0.0f;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) acc += dout[r * OC + o];
  const float sum = cuda::block_sum(acc, scratch);  // every thread of the block takes part
  if (threadIdx.x == 0) dbias[o] += sum;
}

void launch(const MatmulBackwardBiasArgs& a, const Launch& l) {
  WB_LAUNCH(bias_block_per_column, a.OC, l.block_size(), 0, cuda::stream(l), a.dbias, a.dout, a.B * a.T, a.OC);
}

}  // namespace

Variant matmul_backward_bias_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one block per column, threads stride over the rows, block reduction";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
