#pragma once
// The kernel of the naive linear-layer rungs -- matmul_forward cuda/1,
// matmul_gelu_forward cuda/1 and their bf16 twins -- templated on the storage (float or
// __nv_bfloat16) and on the GELU epilogue: one thread per output i = (r, o) of the
// rows x OC product, the dot product of inp row r and weight row o in fp32 (every
// element widened), plus bias[o]. Without GELU out[i] is that sum; with it (the fused
// rungs) pre[i] is the sum and out[i] its GELU, both from the unrounded sum. Each output
// is rounded to the storage once.
//
// The kernel sits in an anonymous namespace: every file that includes this header gets
// its own copy and uses it.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/packed.cuh"

namespace wb::cuda::matmul_naive {
namespace {

template <class Storage, bool kGelu>
__global__ void thread_per_output(Storage* out, Storage* pre, const Storage* inp, const Storage* weight,
                                  const Storage* bias, int64_t rows, int C, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * OC) return;
  const int64_t r = i / OC;
  const int o = int(i % OC);
  const Storage* x = inp + r * C;
  const Storage* w = weight + int64_t(o) * C;
  float acc = bias ? widen(bias[o]) : 0.0f;
  for (int c = 0; c < C; ++c) acc += widen(x[c]) * widen(w[c]);
  if constexpr (kGelu) {
    pre[i] = narrow<Storage>(acc);
    out[i] = narrow<Storage>(gelu::gelu(acc));
  } else {
    out[i] = narrow<Storage>(acc);
  }
}

}  // namespace
}  // namespace wb::cuda::matmul_naive
