// global_norm, CUDA variant 2: deterministic two-pass reduction.
//
// Idea: pass 1 -- a capped grid of P blocks strides over the gradients with float4
// loads, each thread summing its squares, each block reducing them (warp shuffles,
// then shared memory) and writing its partial to partials[blockIdx.x] in the
// workspace. Pass 2 -- one block of the same size reads the P partials (thread t sums
// t, t + block_size, ... in that order), reduces them the same way and writes
// sqrt(total) to out[0]. The last N % 4 gradients (at most three) are added by the
// first threads of block 0 in pass 1.
// Why it should beat variant 1: no atomics, so every addition happens in an order fixed
// by the shape and the block size alone: bitwise the same result on every run (and on
// every GPU); out[0] is written exactly once, so it needs no memset. float4 loads
// quarter the load instructions.
// Limits: two launches; the grads must start on a 16-byte boundary (checked before the
// launch). Workspace: one float per block of pass 1 (at most 2^18 / block_size).
#include <cstdint>
#include <stdexcept>

#include "contract/ops/global_norm.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/reduction.cuh"
#include "device/cuda/runtime.h"
#include "variants/global_norm/norm_finish.cuh"

namespace wb::variants {
namespace {

__global__ void partial_sums_of_squares(float* partials, const float* grads, int64_t n) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const int64_t vecs = n / 4;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  float sum = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    const float4 g = cuda::load4_stream(grads + 4 * i);
    sum += (g.x * g.x + g.y * g.y) + (g.z * g.z + g.w * g.w);
  }
  const int64_t tail = n - 4 * vecs;  // 0..3
  if (blockIdx.x == 0 && threadIdx.x < tail) {
    const float g = grads[4 * vecs + threadIdx.x];
    sum += g * g;
  }
  sum = cuda::block_sum(sum, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

unsigned pass1_blocks(int64_t n, int block) { return cuda::reduction_blocks(n / 4, block); }

void launch(const GlobalNormArgs& a, const Launch& l) {
  cuda::require_aligned16("global_norm cuda/2", {a.grads});
  const int block = l.block_size();
  const unsigned blocks = pass1_blocks(a.N, block);
  if (l.workspace_bytes < blocks * sizeof(float))
    throw std::logic_error("global_norm cuda/2: workspace too small for the partial sums");
  float* partials = static_cast<float*>(l.workspace);
  const cudaStream_t s = cuda::stream(l);
  WB_LAUNCH(partial_sums_of_squares, blocks, block, 0, s, partials, a.grads, a.N);
  WB_LAUNCH(cuda::finish_norm, 1, block, 0, s, a.out, partials, int(blocks));
}

}  // namespace

Variant global_norm_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "float4 grid-stride block partials to the workspace, then one block sums them in a fixed order";
  v.params = {block_size_param()};
  v.workspace = [](const Shape& s, const ParamValues& p) {
    return std::size_t(pass1_blocks(s.N, p.get("block_size"))) * sizeof(float);
  };
  return v;
}

}  // namespace wb::variants
