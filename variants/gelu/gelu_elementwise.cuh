#pragma once
// The elementwise GELU rungs of gelu_forward and gelu_backward on either storage, each
// kernel templated on the direction and (the naive one) on the storage, float or
// __nv_bfloat16:
//   forward   out = gelu(inp)
//   backward  dinp = gelu'(inp) * dout
// each element widened, the op in fp32 (variants/gelu/gelu.cuh) and the result rounded
// to the storage once (on float storage, no rounding at all).
//   thread_per_element  cuda/1 of all four ops: one thread per element.
//   packed              the bf16 ops' cuda/2: eight bf16 per thread, 128-bit streaming
//                       loads and stores (every element is touched once); the thread
//                       past the last eight takes the N % 8 tail. Safe in place.
// The rungs differ in their argument struct and summary only: GeluForwardArgs and
// GeluForwardBf16Args (out, inp, N), GeluBackwardArgs and GeluBackwardBf16Args (dinp,
// inp, dout, N); each registers rung<Args, Kernel::naive or Kernel::packed>(summary).
//
// The kernels sit in an anonymous namespace: every file that includes this header gets
// its own copy and uses it.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "contract/variant.h"
#include "device/cuda/as_device.cuh"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"

namespace wb::cuda::gelu_elementwise {
namespace {

// Element j of the output: gelu(inp[j]), or gelu'(inp[j]) * dout[j] backward.
template <bool kBackward, class Storage>
__device__ inline Storage element(const Storage* inp, const Storage* dout, int64_t j) {
  const float x = widen(inp[j]);
  if constexpr (kBackward) {
    return narrow<Storage>(gelu::gelu_grad(x) * widen(dout[j]));
  } else {
    return narrow<Storage>(gelu::gelu(x));
  }
}

// dout is null forward.
template <class Storage, bool kBackward>
__global__ void thread_per_element(Storage* out, const Storage* inp, const Storage* dout, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = element<kBackward>(inp, dout, i);
}

// n8 = n / 8 packs; thread n8 takes the tail.
template <bool kBackward>
__global__ void packed(__nv_bfloat16* out, const __nv_bfloat16* inp, const __nv_bfloat16* dout, int64_t n8, int64_t n) {
  using Bf16x8 = Packed128<__nv_bfloat16>;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n8) {
    const Bf16x8 x = load128_stream(inp + 8 * i);
    Bf16x8 d, y;
    if constexpr (kBackward) d = load128_stream(dout + 8 * i);
#pragma unroll
    for (int k = 0; k < Bf16x8::kSize; ++k) y[k] = element<kBackward>(&x[0], &d[0], k);
    store128_stream(out + 8 * i, y);
  } else if (i == n8) {
    for (int64_t j = 8 * n8; j < n; ++j) out[j] = element<kBackward>(inp, dout, j);
  }
}

// The op's tensors from Args: out and inp, and dout backward (null forward). The
// backward's argument structs are the ones with dout.
template <class Args, class = void>
struct Tensors {
  static constexpr bool kBackward = false;
  static auto out(const Args& a) { return as_device(a.out); }
  static auto dout(const Args& a) { return decltype(as_device(a.inp))(nullptr); }
};
template <class Args>
struct Tensors<Args, std::void_t<decltype(std::declval<Args>().dout)>> {
  static constexpr bool kBackward = true;
  static auto out(const Args& a) { return as_device(a.dinp); }
  static auto dout(const Args& a) { return as_device(a.dout); }
};

template <class Args>
void launch_naive(const Args& a, const Launch& l) {
  using T = Tensors<Args>;
  using Storage = std::remove_pointer_t<decltype(T::out(a))>;
  const int block = l.block_size();
  WB_LAUNCH(thread_per_element<Storage, T::kBackward>, grid_for(a.N, block), block, 0, stream(l), T::out(a),
            as_device(a.inp), T::dout(a), a.N);
}

// The packed kernel runs on bf16 storage only: the bf16 ops' cuda/2.
template <class Args>
void launch_packed(const Args& a, const Launch& l) {
  using T = Tensors<Args>;
  require_aligned16(T::kBackward ? "gelu_backward_bf16 cuda/2" : "gelu_forward_bf16 cuda/2",
                    {T::out(a), a.inp, T::dout(a)});  // a null dout (forward) passes
  const int64_t n8 = a.N / 8;
  const int block = l.block_size();
  // n8 + 1 threads: the last one takes the tail (it finds nothing to do when N % 8 == 0).
  WB_LAUNCH(packed<T::kBackward>, grid_for(n8 + 1, block), block, 0, stream(l), T::out(a), as_device(a.inp), T::dout(a),
            n8, a.N);
}

enum class Kernel { naive, packed };

template <class Args, Kernel K>
constexpr auto launcher() {
  if constexpr (K == Kernel::packed) {
    return &launch_packed<Args>;
  } else {
    return &launch_naive<Args>;
  }
}

// The rung of Args on kernel K: any block size.
template <class Args, Kernel K>
Variant rung(std::string summary) {
  Variant v = Variant::of(launcher<Args, K>());
  v.summary = std::move(summary);
  v.params = {block_size_param()};
  return v;
}

}  // namespace
}  // namespace wb::cuda::gelu_elementwise
