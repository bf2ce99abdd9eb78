#pragma once
// The kernel of the naive linear-layer rungs -- matmul_forward cuda/1,
// matmul_gelu_forward cuda/1 and their bf16 twins -- templated on the storage (float or
// __nv_bfloat16) and on the GELU epilogue: one thread per output i = (r, o) of the
// rows x OC product, the dot product of inp row r and weight row o in fp32 (every
// element widened), plus bias[o]. Without GELU out[i] is that sum; with it (the fused
// rungs) pre[i] is the sum and out[i] its GELU, both from the unrounded sum. Each output
// is rounded to the storage once.
//
// The four rungs differ in their argument struct and summary only: each registers
// variant<Args>(summary).
//
// The kernel sits in an anonymous namespace: every file that includes this header gets
// its own copy and uses it.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "contract/variant.h"
#include "device/cuda/as_device.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"
#include "variants/matmul/matmul.cuh"

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

// Whether Args is a fused GELU rung's argument struct: it has pre.
template <class Args, class = void>
constexpr bool kHasPre = false;
template <class Args>
constexpr bool kHasPre<Args, std::void_t<decltype(std::declval<Args>().pre)>> = true;

// Args: the op's argument struct; the storage is its out's.
template <class Args>
void launch(const Args& a, const Launch& l) {
  constexpr bool kGelu = kHasPre<Args>;
  using Storage = std::remove_pointer_t<decltype(as_device(a.out))>;
  Storage* pre = nullptr;
  if constexpr (kGelu) pre = as_device(a.pre);
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  WB_LAUNCH(thread_per_output<Storage, kGelu>, grid_for(rows * a.OC, block), block, 0, stream(l), as_device(a.out), pre,
            as_device(a.inp), as_device(a.weight), as_device(a.bias), rows, a.C, a.OC);
}

// The rung of Args: any block size, up to the grid a thread per output needs.
template <class Args>
Variant variant(std::string summary) {
  Variant v = Variant::of(&launch<Args>);
  v.summary = std::move(summary);
  v.params = {block_size_param()};
  v.launch_limit = matmul::thread_per_output_limit;
  return v;
}

}  // namespace
}  // namespace wb::cuda::matmul_naive
