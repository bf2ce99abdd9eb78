// encoder_backward_bf16, CUDA variant 1: the naive port, first occurrences sum their
// token.
//
// Idea: each element of dwte must be rounded once, so the contributions of one token
// are summed before they touch it: thread (bt, c) returns unless position bt is the
// first position of its token (it scans the positions before it), and otherwise sums
// dout[., c] over bt and every later position of the same token, in position order, in
// fp32, and writes dwte[token, c] = bf16(old + sum). A second kernel, thread (t, c),
// sums dout[b, t, c] over b and rounds dwpe[t, c] once (variants/encoder_backward/token_runs.cuh's
// accumulate_positions).
// Why: the baseline of the bf16 ladder: no atomics (a bf16 atomicAdd per position
// would round at every addition), deterministic, and the loads of dout coalesce along c.
// Limits: every thread scans the positions before it and the first occurrences scan all
// after: (B*T)^2 token comparisons per channel, fine at the check shapes, slow at
// GPT-2's B*T = 4096.
#include <cuda_bf16.h>

#include <cstdint>

#include "contract/ops/encoder_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/encoder_backward/token_runs.cuh"

namespace wb::variants {
namespace {

__global__ void dwte_bf16_first_occurrences(__nv_bfloat16* dwte, const __nv_bfloat16* dout, const int32_t* inp,
                                            int positions, int C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // bt * C + c
  if (i >= int64_t(positions) * C) return;
  const int bt = int(i / C), c = int(i % C);
  const int token = inp[bt];
  for (int before = 0; before < bt; ++before)
    if (inp[before] == token) return;  // not the first position of the token
  float sum = 0.0f;
  for (int j = bt; j < positions; ++j)
    if (inp[j] == token) sum += __bfloat162float(dout[int64_t(j) * C + c]);
  __nv_bfloat16& w = dwte[int64_t(token) * C + c];
  w = __float2bfloat16(__bfloat162float(w) + sum);
}

void launch(const EncoderBackwardBf16Args& a, const Launch& l) {
  const int positions = a.B * a.T;
  const int block = l.block_size();
  const cudaStream_t s = cuda::stream(l);
  WB_LAUNCH(dwte_bf16_first_occurrences, cuda::grid_for(int64_t(positions) * a.C, block), block, 0, s,
            cuda::as_cuda(a.dwte), cuda::as_cuda(a.dout), a.inp, positions, a.C);
  WB_LAUNCH(cuda::token_runs::accumulate_positions<__nv_bfloat16>, cuda::grid_for(int64_t(a.T) * a.C, block), block,
            0, s, cuda::as_cuda(a.dwpe), cuda::as_cuda(a.dout), a.B, a.T, a.C);
}

}  // namespace

Variant encoder_backward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "first position of each token sums the token's dout in fp32 and rounds dwte once; dwpe summed over b";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
