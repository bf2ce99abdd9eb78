// encoder_forward, CUDA variant 1: one thread per token, the naive port of the CPU loop.
//
// Idea: thread (b,t) looks up its token's row of wte and position t's row of wpe and
// writes their sum, C values, one after the other -- the reference's loop body.
// Why: the baseline the ladder starts from; plainly correct.
// Limits: neighbouring threads touch addresses C floats apart, so no access coalesces,
// and only B*T threads exist, each walking a whole row serially.
#include "contract/ops/encoder_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void encoder_thread_per_token(float* out, const int32_t* inp, const float* wte, const float* wpe, int rows,
                                         int T, int C) {
  const int bt = blockIdx.x * blockDim.x + threadIdx.x;
  if (bt >= rows) return;
  const int t = bt % T;
  const float* token_row = wte + size_t(inp[bt]) * C;
  const float* position_row = wpe + size_t(t) * C;
  float* out_row = out + size_t(bt) * C;
  for (int c = 0; c < C; ++c) out_row[c] = token_row[c] + position_row[c];
}

void launch(const EncoderForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  WB_LAUNCH(encoder_thread_per_token, cuda::grid_for(rows, block), block, 0, cuda::stream(l), a.out, a.inp, a.wte,
            a.wpe, rows, a.T, a.C);
}

}  // namespace

Variant encoder_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per (b,t) adds its wte and wpe rows serially, like the CPU loop";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
