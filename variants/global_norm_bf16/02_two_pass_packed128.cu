// global_norm_bf16, CUDA variant 2: deterministic two passes, 128-bit loads.
//
// Idea: global_norm cuda/2 on bf16 gradients: pass 1 -- a capped grid of P blocks
// strides over the gradients eight at a time (one 128-bit streaming load of
// Packed128<__nv_bfloat16>), each thread summing the widened squares in fp32, each
// block reducing them and writing its partial to partials[blockIdx.x] in the
// workspace; the last N % 8 gradients are added by the first threads of block 0.
// Pass 2 -- one block reads the P partials in a fixed order, reduces them the same
// way and writes sqrt(total) to out[0].
// Why it should beat variant 1: no atomics, so the result is bitwise the same on every
// run (and every GPU), and out[0] needs no memset; an eighth of the load instructions.
// llm.c's bf16 step reads its gradients the same way.
// Limits: two launches; grads 16-byte aligned (checked before the launch). Workspace:
// one float per block of pass 1 (at most 2^18 / block_size).
#include <cuda_bf16.h>

#include <cstdint>
#include <stdexcept>

#include "contract/ops/global_norm.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/reduction.cuh"
#include "device/cuda/runtime.h"
#include "variants/global_norm/norm_finish.cuh"

namespace wb::variants {
namespace {

using Bf16x8 = cuda::Packed128<__nv_bfloat16>;

__global__ void partial_sums_of_squares_bf16(float* partials, const __nv_bfloat16* grads, int64_t n) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const int64_t packs = n / 8;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  float sum = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < packs; i += stride) {
    const Bf16x8 g = cuda::load128_stream(grads + 8 * i);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float x = __bfloat162float(g[k]);
      sum += x * x;
    }
  }
  const int64_t tail = n - 8 * packs;  // 0..7
  if (blockIdx.x == 0 && threadIdx.x < tail) {
    const float x = __bfloat162float(grads[8 * packs + threadIdx.x]);
    sum += x * x;
  }
  sum = cuda::block_sum(sum, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

unsigned pass1_blocks(int64_t n, int block) { return cuda::reduction_blocks(n / 8, block); }

void launch(const GlobalNormBf16Args& a, const Launch& l) {
  cuda::require_aligned16("global_norm_bf16 cuda/2", {a.grads});
  const int block = l.block_size();
  const unsigned blocks = pass1_blocks(a.N, block);
  if (l.workspace_bytes < blocks * sizeof(float))
    throw std::logic_error("global_norm_bf16 cuda/2: workspace too small for the partial sums");
  float* partials = static_cast<float*>(l.workspace);
  const cudaStream_t s = cuda::stream(l);
  WB_LAUNCH(partial_sums_of_squares_bf16, blocks, block, 0, s, partials, cuda::as_cuda(a.grads), a.N);
  WB_LAUNCH(cuda::finish_norm, 1, block, 0, s, a.out, partials, int(blocks));
}

}  // namespace

Variant global_norm_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "8 bf16 per 128-bit load, grid-stride block partials to the workspace, one block sums them in order";
  v.params = {block_size_param()};
  v.workspace = [](const Shape& s, const ParamValues& p) {
    return std::size_t(pass1_blocks(s.N, p.get("block_size"))) * sizeof(float);
  };
  return v;
}

}  // namespace wb::variants
