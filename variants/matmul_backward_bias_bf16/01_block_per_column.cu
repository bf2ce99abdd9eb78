// matmul_backward_bias_bf16, CUDA variant 1: one block per column, the naive port.
//
// Idea: matmul_backward_bias cuda/1 on bf16 storage: block o sums column o of dout
// (B*T rows, OC columns): its threads stride over the rows, each widening what it reads
// and keeping a running fp32 sum in its own order, then a block reduction (warp
// shuffles, then one warp over the per-warp sums) gives the column sum; thread 0 widens
// the old dbias[o], adds the sum in fp32 and rounds once to nearest even. The order of
// every addition is fixed: deterministic.
// Why: the baseline of the bf16 ladder, the CPU loop's reduction over rows spread over a
// block.
// Limits: the threads of a warp read 32 different rows of one column, OC values apart:
// each 2-byte load is its own 32-byte sector (sixteen times the bytes it needs); one
// block per column and a __syncthreads-bound reduction at the end.
#include <cuda_bf16.h>

#include <cstdint>

#include "contract/ops/matmul_backward_bias.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

// grid OC, block: any multiple of 32 up to 1024.
__global__ void bias_bf16_block_per_column(__nv_bfloat16* dbias, const __nv_bfloat16* dout, int rows, int OC) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const int o = blockIdx.x;
  float acc = 0.0f;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) acc += __bfloat162float(dout[r * OC + o]);
  const float sum = cuda::block_sum(acc, scratch);  // every thread of the block takes part
  if (threadIdx.x == 0) dbias[o] = __float2bfloat16(__bfloat162float(dbias[o]) + sum);
}

void launch(const MatmulBackwardBiasBf16Args& a, const Launch& l) {
  WB_LAUNCH(bias_bf16_block_per_column, a.OC, l.block_size(), 0, cuda::stream(l), cuda::as_cuda(a.dbias),
            cuda::as_cuda(a.dout), a.B * a.T, a.OC);
}

}  // namespace

Variant matmul_backward_bias_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one block per column, threads stride over the rows summing widened bf16 in fp32, block reduction, "
              "old + sum rounded once";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
