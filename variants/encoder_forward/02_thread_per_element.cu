// encoder_forward, CUDA variant 2: one thread per output element.
//
// Idea: B*T*C threads; thread i finds its token (b,t) = i / C and channel c = i % C
// and writes out[i] = wte[token, c] + wpe[t, c].
// Why it should beat variant 1: a warp now covers 32 consecutive channels of one row
// (or two rows), so every load of wte and wpe and every store coalesces, and there
// are C times more threads to hide the memory latency.
// Limits: 32-bit accesses (one load instruction per float), and a 64-bit division and
// remainder per element to recover (b,t,c).
#include "contract/ops/encoder_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void encoder_thread_per_element(float* out, const int32_t* inp, const float* wte, const float* wpe,
                                           int64_t n, int T, int C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t bt = i / C;
  const int c = int(i - bt * C);
  const int t = int(bt % T);
  out[i] = wte[int64_t(inp[bt]) * C + c] + wpe[int64_t(t) * C + c];
}

void launch(const EncoderForwardArgs& a, const Launch& l) {
  const int64_t n = int64_t(a.B) * a.T * a.C;
  const int block = l.block_size();
  WB_LAUNCH(encoder_thread_per_element, cuda::grid_for(n, block), block, 0, cuda::stream(l), a.out, a.inp, a.wte, a.wpe,
            n, a.T, a.C);
}

}  // namespace

Variant encoder_forward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per output element: coalesced loads of wte and wpe rows";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
