// gelu_backward, CUDA variant 2: 128-bit loads and stores.
//
// Idea: each thread handles four consecutive elements: one float4 load of inp and of
// dout, four derivatives, one float4 store of dinp. The last N % 4 elements (at most
// three) are done one by one by the first threads of block 0.
// Why it should beat variant 1: a quarter of the memory instructions for the same
// bytes, so fewer instructions stand between the load/store units and the bandwidth;
// streaming (evict-first) hints keep the single-use data from crowding L2.
// Limits: the tensors must start on a 16-byte boundary (cudaMalloc's are; checked
// before the launch). Still one vector per thread: the sweep shows whether that keeps
// enough loads in flight.
#include <cstdint>
#include <stdexcept>

#include "contract/ops/gelu_backward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"

namespace wb::variants {
namespace {

using cuda::gelu::gelu_grad;

__global__ void gelu_backward_vec4(float* dinp, const float* inp, const float* dout, int64_t n) {
  const int64_t vecs = n / 4;
  const int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < vecs) {
    const float4 x = cuda::load4_stream(inp + 4 * v);
    const float4 d = cuda::load4_stream(dout + 4 * v);
    float4 r;
    r.x = gelu_grad(x.x) * d.x;
    r.y = gelu_grad(x.y) * d.y;
    r.z = gelu_grad(x.z) * d.z;
    r.w = gelu_grad(x.w) * d.w;
    cuda::store4_stream(dinp + 4 * v, r);
  }
  const int64_t tail = n - 4 * vecs;  // 0..3
  if (blockIdx.x == 0 && threadIdx.x < tail) {
    const int64_t i = 4 * vecs + threadIdx.x;
    dinp[i] = gelu_grad(inp[i]) * dout[i];
  }
}

void launch(const GeluBackwardArgs& a, const Launch& l) {
  cuda::require_aligned16("gelu_backward cuda/2", {a.dinp, a.inp, a.dout});
  const int block = l.block_size();
  const int64_t vecs = a.N / 4;
  const unsigned grid = vecs > 0 ? cuda::grid_for(vecs, block) : 1u;
  WB_LAUNCH(gelu_backward_vec4, grid, block, 0, cuda::stream(l), a.dinp, a.inp, a.dout, a.N);
}

}  // namespace

Variant gelu_backward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "four elements per thread through 128-bit streaming loads and stores";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
