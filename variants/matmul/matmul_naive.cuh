#pragma once
// The kernel of the naive matmul rungs -- matmul_forward cuda/1, matmul_gelu_forward
// cuda/1, their bf16 twins and matmul_backward_bf16 cuda/1 -- templated on the storage
// (float or __nv_bfloat16), the epilogue and the operands' layouts: one thread per
// output, a dot product in fp32 of widened elements. The forward's output (r, o) is the
// dot product of inp row r and weight row o, plus bias[o]. Without GELU out[i] is that
// sum; with it (the fused rungs) pre[i] is the sum and out[i] its GELU, both from the
// unrounded sum. Each output is rounded to the storage once.
//
// The four forward rungs differ in their argument struct and summary only: each
// registers variant<Args>(summary). matmul_backward_bf16 cuda/1 launches the kernel for
// its two products itself.
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

// How the sums become outputs (a kernel template parameter; an int, so that the
// kernel's name reads the same from nvcc's and the emulator's symbols).
enum Epilogue : int {
  kStore = 0,       // out = the sum
  kGelu = 1,        // pre = the sum, out = its GELU, both from the unrounded sum
  kAccumulate = 2,  // out = out + the sum, the old value widened first (a gradient)
};

// out (M x N, row-major) = A (M x K) @ B (K x N), one thread per output i = (m, n): the
// sum over k in order, from bias[n] (0 without a bias), of A(m, k) B(k, n), both
// widened, in fp32; then kEpilogue, each output rounded to the storage once. A is
// stored k-contiguous (kAKContiguous: A(m, k) = a[m lda + k], the forward's inp, the
// backward's dout for dinp) or k-major (a[k lda + m]); B likewise (k-contiguous:
// B(k, n) = b[n ldb + k], the forward's weight; k-major: b[k ldb + n]).
template <class Storage, int kEpilogue, bool kAKContiguous, bool kBKContiguous>
__global__ void thread_per_output(Storage* out, Storage* pre, const Storage* a, const Storage* b, const Storage* bias,
                                  int64_t M, int N, int64_t K, int lda, int ldb) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= M * N) return;
  const int64_t m = i / N;
  const int n = int(i % N);
  float acc = bias ? widen(bias[n]) : 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    const Storage x = kAKContiguous ? a[m * lda + k] : a[k * lda + m];
    const Storage y = kBKContiguous ? b[int64_t(n) * ldb + k] : b[k * ldb + n];
    acc += widen(x) * widen(y);
  }
  if constexpr (kEpilogue == kGelu) {
    pre[i] = narrow<Storage>(acc);
    out[i] = narrow<Storage>(gelu::gelu(acc));
  } else if constexpr (kEpilogue == kAccumulate) {
    out[i] = narrow<Storage>(widen(out[i]) + acc);
  } else {
    out[i] = narrow<Storage>(acc);
  }
}

// thread_per_output on the launch's stream, block_size threads a block. Storage is
// deduced from out alone (pre and bias may be null).
template <int kEpilogue, bool kAKContiguous, bool kBKContiguous, class Storage>
void launch_product(Storage* out, typename std::remove_cv<Storage>::type* pre, const Storage* a, const Storage* b,
                    const typename std::remove_cv<Storage>::type* bias, int64_t M, int N, int64_t K, int lda, int ldb,
                    const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(thread_per_output<Storage, kEpilogue, kAKContiguous, kBKContiguous>, grid_for(M * N, block), block, 0,
            stream(l), out, pre, a, b, bias, M, N, K, lda, ldb);
}

// Whether Args is a fused GELU rung's argument struct: it has pre.
template <class Args, class = void>
constexpr bool kHasPre = false;
template <class Args>
constexpr bool kHasPre<Args, std::void_t<decltype(std::declval<Args>().pre)>> = true;

// Args: the op's argument struct; the storage is its out's. out (rows x OC) = inp
// (rows x C) @ weight^T + bias: both operands k-contiguous, rows C long.
template <class Args>
void launch(const Args& a, const Launch& l) {
  using Storage = std::remove_pointer_t<decltype(as_device(a.out))>;
  Storage* pre = nullptr;
  if constexpr (kHasPre<Args>) pre = as_device(a.pre);
  launch_product<kHasPre<Args> ? kGelu : kStore, true, true>(as_device(a.out), pre, as_device(a.inp),
                                                             as_device(a.weight), as_device(a.bias), int64_t(a.B) * a.T,
                                                             a.OC, a.C, a.C, a.C, l);
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
