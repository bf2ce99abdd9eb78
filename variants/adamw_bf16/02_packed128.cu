// adamw_bf16, CUDA variant 2: eight parameters per thread, 128-bit accesses.
//
// Idea: thread i < N/8 owns parameters 8i..8i+7: one 128-bit streaming load of its
// eight bf16 gradients (read once), two 128-bit loads each of the master weights, m and
// v (Packed128<float>), all issued before any arithmetic; then the eight updates in
// fp32 (variants/adamw/adamw.cuh), and the results leave as two 128-bit stores per fp32
// tensor and one of the eight rounded bf16 parameters. One extra thread, i == N/8,
// updates the N % 8 tail one by one, so every N is supported. The stochastic rounding
// keys on the element index, so the bits equal variant 1's.
// Why it should beat variant 1: an eighth of the memory instructions for the same 26
// bytes per parameter (bf16 gradient and parameter, fp32 master, m and v read and
// written): a purely bandwidth-bound op needs wide accesses and many in flight.
// Limits: the tensors 16-byte aligned (cudaMalloc's are; checked before the launch).
// More registers than variant 1.
#include <cuda_bf16.h>

#include <cstdint>

#include "contract/ops/adamw.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/adamw/adamw_master.cuh"

namespace wb::variants {
namespace {

using cuda::adamw::Step;
using cuda::adamw::StepInputs;
using Bf16x8 = cuda::Packed128<__nv_bfloat16>;
using Floatx4 = cuda::Packed128<float>;

__global__ void adamw_bf16_packed(__nv_bfloat16* params, float* master, float* m, float* v, const __nv_bfloat16* grads,
                                  int64_t n8, int64_t n, StepInputs in, int stochastic) {
  const Step s = cuda::adamw::step_at(in);
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n8) {
    const int64_t first = 8 * i;
    const Bf16x8 g = cuda::load128_stream(grads + first);
    Floatx4 p[2], mv[2], vv[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      p[h] = cuda::load128(master + first + 4 * h);
      mv[h] = cuda::load128(m + first + 4 * h);
      vv[h] = cuda::load128(v + first + 4 * h);
    }
    Bf16x8 out;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      float& pk = p[k / 4][k % 4];
      cuda::adamw::update(pk, mv[k / 4][k % 4], vv[k / 4][k % 4], __bfloat162float(g[k]), s);
      out[k] = cuda::adamw::round_param(pk, first + k, s.seed, stochastic);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      cuda::store128(master + first + 4 * h, p[h]);
      cuda::store128(m + first + 4 * h, mv[h]);
      cuda::store128(v + first + 4 * h, vv[h]);
    }
    cuda::store128(params + first, out);
  } else if (i == n8) {
    for (int64_t j = 8 * n8; j < n; ++j) {  // the N % 8 tail
      const float p = cuda::adamw::update_master(master, m, v, grads[j], j, s);
      params[j] = cuda::adamw::round_param(p, j, s.seed, stochastic);
    }
  }
}

void launch(const AdamwBf16Args& a, const Launch& l) {
  cuda::require_aligned16("adamw_bf16 cuda/2", {a.params, a.master, a.m, a.v, a.grads});
  const int64_t n8 = a.N / 8;
  const int block = l.block_size();
  // n8 + 1 threads: the last one takes the tail (nothing to do when N % 8 == 0).
  WB_LAUNCH(adamw_bf16_packed, cuda::grid_for(n8 + 1, block), block, 0, cuda::stream(l), cuda::as_cuda(a.params),
            a.master, a.m, a.v, cuda::as_cuda(a.grads), n8, a.N, cuda::adamw::inputs_of(a), a.stochastic);
}

}  // namespace

Variant adamw_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "eight parameters per thread: 128-bit loads of all five tensors before the updates, scalar tail";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
