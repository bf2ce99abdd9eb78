// encoder_forward_bf16, CUDA variant 1: one thread per element, the naive port.
//
// Idea: thread i finds its row bt = i / C and channel c, widens wte[inp[bt], c] and
// wpe[bt % T, c], adds them in fp32 (exact: two bf16 sum exactly in fp32 unless their
// exponents are more than 16 apart) and rounds the sum once to nearest even.
// Why: the baseline of the bf16 ladder; neighbouring threads touch neighbouring
// channels, so every access coalesces.
// Limits: one 16-bit load per input and one 16-bit store per element, and a 64-bit
// division per element.
#include <cuda_bf16.h>

#include <cstdint>

#include "contract/ops/encoder_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void encoder_bf16_thread_per_element(__nv_bfloat16* out, const int32_t* inp, const __nv_bfloat16* wte,
                                                const __nv_bfloat16* wpe, int64_t n, int T, int C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t bt = i / C;
  const int64_t c = i - bt * C;
  const int64_t t = bt % T;
  const float w = __bfloat162float(wte[int64_t(inp[bt]) * C + c]);
  const float p = __bfloat162float(wpe[t * C + c]);
  out[i] = __float2bfloat16(w + p);
}

void launch(const EncoderForwardBf16Args& a, const Launch& l) {
  const int64_t n = int64_t(a.B) * a.T * a.C;
  const int block = l.block_size();
  WB_LAUNCH(encoder_bf16_thread_per_element, cuda::grid_for(n, block), block, 0, cuda::stream(l),
            cuda::as_cuda(a.out), a.inp, cuda::as_cuda(a.wte), cuda::as_cuda(a.wpe), n, a.T, a.C);
}

}  // namespace

Variant encoder_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element: widen, add in fp32, round once";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
