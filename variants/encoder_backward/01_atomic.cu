// encoder_backward, CUDA variant 1: one thread per element, float atomics.
//
// Idea: thread (b, t, c) reads dout[b,t,c] once and adds it to dwte[inp[b,t], c] and to
// dwpe[t, c] with atomicAdd: positions that share a token (or, for dwpe, the B
// positions that share t) collide only through the atomics.
// Why: the direct port of the scatter-add; every load of dout coalesces, and the
// channels of a row of dwte / dwpe are neighbouring addresses, so the atomics of a
// warp coalesce too.
// Limits: float atomics land in an order that changes from run to run: not
// deterministic. Frequent tokens serialise on the same addresses. 32-bit accesses.
#include <cstdint>

#include "contract/ops/encoder_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void encoder_backward_atomic(float* dwte, float* dwpe, const float* dout, const int32_t* inp, int64_t n,
                                        int T, int C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t bt = i / C;
  const int c = int(i - bt * C);
  const int64_t t = bt % T;
  const float d = dout[i];
  atomicAdd(dwte + int64_t(inp[bt]) * C + c, d);
  atomicAdd(dwpe + t * C + c, d);
}

void launch(const EncoderBackwardArgs& a, const Launch& l) {
  const int64_t n = int64_t(a.B) * a.T * a.C;
  const int block = l.block_size();
  WB_LAUNCH(encoder_backward_atomic, cuda::grid_for(n, block), block, 0, cuda::stream(l), a.dwte, a.dwpe, a.dout, a.inp,
            n, a.T, a.C);
}

}  // namespace

Variant encoder_backward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element of dout, atomicAdd into dwte and dwpe";
  v.params = {block_size_param()};
  v.deterministic = [](const ParamValues&) { return false; };  // float atomicAdd: the order of the adds varies
  return v;
}

}  // namespace wb::variants
