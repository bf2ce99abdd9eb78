// residual_forward_bf16, CUDA variant 2: eight elements per thread, 128-bit accesses.
//
// Idea: thread i < N/8 loads elements 8i..8i+7 of each input with one 128-bit
// streaming load (Packed128<__nv_bfloat16>, read once: evict-first), adds them in fp32
// and stores the eight rounded sums with one 128-bit streaming store; one extra thread,
// i == N/8, adds the N % 8 tail with scalar accesses, so every N is supported.
// Why it should beat variant 1: an eighth of the memory instructions for the same bytes;
// the op is pure data movement, so this is what brings it to the copy bandwidth.
// Limits: the three pointers 16-byte aligned (cudaMalloc gives 256; the launcher checks
// and throws otherwise). Safe in place, as variant 1: each element is loaded, then
// stored by the same thread, with coherent loads and no __restrict__.
#include <cuda_bf16.h>

#include <cstdint>

#include "contract/ops/residual_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

using Bf16x8 = cuda::Packed128<__nv_bfloat16>;

__global__ void residual_bf16_packed(__nv_bfloat16* out, const __nv_bfloat16* inp1, const __nv_bfloat16* inp2,
                                     int64_t n8, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n8) {
    const Bf16x8 x = cuda::load128_stream(inp1 + 8 * i);
    const Bf16x8 y = cuda::load128_stream(inp2 + 8 * i);
    Bf16x8 sum;
#pragma unroll
    for (int k = 0; k < Bf16x8::kSize; ++k) sum[k] = __float2bfloat16(__bfloat162float(x[k]) + __bfloat162float(y[k]));
    cuda::store128_stream(out + 8 * i, sum);
  } else if (i == n8) {
    for (int64_t j = 8 * n8; j < n; ++j)  // the N % 8 tail
      out[j] = __float2bfloat16(__bfloat162float(inp1[j]) + __bfloat162float(inp2[j]));
  }
}

void launch(const ResidualForwardBf16Args& a, const Launch& l) {
  cuda::require_aligned16("residual_forward_bf16 cuda/2", {a.out, a.inp1, a.inp2});
  const int64_t n8 = a.N / 8;
  const int block = l.block_size();
  // n8 + 1 threads: the last one takes the tail (nothing to do when N % 8 == 0).
  WB_LAUNCH(residual_bf16_packed, cuda::grid_for(n8 + 1, block), block, 0, cuda::stream(l), cuda::as_cuda(a.out),
            cuda::as_cuda(a.inp1), cuda::as_cuda(a.inp2), n8, a.N);
}

}  // namespace

Variant residual_forward_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "eight bf16 per thread, 128-bit streaming loads and stores, scalar tail for N % 8; safe in place";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
