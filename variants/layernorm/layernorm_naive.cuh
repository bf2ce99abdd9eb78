#pragma once
// The kernel of the naive layernorm rungs, layernorm_forward cuda/1 and its bf16 twin,
// templated on the storage (float or __nv_bfloat16): one thread per row of C channels
// walks it three times (the sum, the variance around the mean, the normalised output:
// layernorm::normalize_row_serial), each element widened and every sum in fp32; each
// output is rounded to the storage once, mean and rstd stay fp32.
//
// The kernel sits in an anonymous namespace: every file that includes this header gets
// its own copy and uses it.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>
#include <utility>

#include "contract/variant.h"
#include "device/cuda/as_device.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/layernorm/layernorm.cuh"

namespace wb::cuda::layernorm_naive {
namespace {

template <class Storage>
__global__ void thread_per_row(Storage* out, float* mean, float* rstd, const Storage* inp, const Storage* weight,
                               const Storage* bias, int rows, int C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const Storage* x = inp + size_t(row) * C;
  float sum = 0.0f;
  for (int c = 0; c < C; ++c) sum += widen(x[c]);
  const float2 stats = layernorm::normalize_row_serial(x, sum, C, weight, bias, out + size_t(row) * C);
  mean[row] = stats.x;
  rstd[row] = stats.y;
}

// Args: LayernormForwardArgs or LayernormForwardBf16Args.
template <class Args>
void launch(const Args& a, const Launch& l) {
  using Storage = std::remove_pointer_t<decltype(as_device(a.out))>;
  const int rows = a.B * a.T;
  const int block = l.block_size();
  WB_LAUNCH(thread_per_row<Storage>, grid_for(rows, block), block, 0, stream(l), as_device(a.out), a.mean, a.rstd,
            as_device(a.inp), as_device(a.weight), as_device(a.bias), rows, a.C);
}

// The rung of Args: any block size; the twins differ in their argument struct and
// summary only.
template <class Args>
Variant variant(std::string summary) {
  Variant v = Variant::of(&launch<Args>);
  v.summary = std::move(summary);
  v.params = {block_size_param()};
  return v;
}

}  // namespace
}  // namespace wb::cuda::layernorm_naive
