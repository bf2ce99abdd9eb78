// matmul_gelu_forward_bf16, CUDA variant 2: cuBLAS GemmEx into fp32, then one epilogue
// kernel for the bias, pre and the GELU.
//
// Idea: cublasGemmEx multiplies the bf16 matrices with fp32 compute and writes the fp32
// product to the workspace (C of type CUDA_R_32F: no rounding to bf16 yet); one
// elementwise kernel then adds the bias in fp32 and writes pre = bf16(sum) and out =
// bf16(gelu(sum)), both from the unrounded sum as the contract says, eight columns per
// thread with 128-bit accesses when OC % 8 == 0 and every pointer is 16-byte aligned,
// one per thread otherwise. The product is matmul_forward_bf16 cuda/2's
// (cuda::linear_bf16_to_fp32, device/cuda/cublas.h).
// Why it should beat variant 1: cuBLAS picks a tensor-core kernel tuned for the device
// and the shape, and the bias and the GELU share one pass. A GemmEx writing bf16 and a
// GELU kernel reading it back would round the GELU's input: this keeps it exact.
// Limits: the fp32 product makes a round trip through memory (4 bytes an element,
// twice the bf16 output; cuBLASLt's GELU_AUX_BIAS epilogue would avoid it). Workspace:
// B*T*OC floats. block_size is the epilogue kernel's.
#include <cuda_bf16.h>

#include <cstdint>

#include "contract/ops/matmul_gelu_forward.h"
#include "device/cuda/cublas.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"

namespace wb::variants {
namespace {

using Bf16x8 = cuda::Packed128<__nv_bfloat16>;
using Floatx4 = cuda::Packed128<float>;

__global__ void bias_gelu_bf16_scalar(__nv_bfloat16* out, __nv_bfloat16* pre, const float* product,
                                      const __nv_bfloat16* bias, int64_t n, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float p = product[i] + (bias ? __bfloat162float(bias[i % OC]) : 0.0f);
  pre[i] = __float2bfloat16(p);
  out[i] = __float2bfloat16(cuda::gelu::gelu(p));
}

// Eight columns per thread: n8 = rows * OC / 8, oc8 = OC / 8.
__global__ void bias_gelu_bf16_packed(__nv_bfloat16* out, __nv_bfloat16* pre, const float* product,
                                      const __nv_bfloat16* bias, int64_t n8, int oc8) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n8) return;
  const Floatx4 lo = cuda::load128_stream(product + 8 * i), hi = cuda::load128_stream(product + 8 * i + 4);
  Bf16x8 b;
  if (bias) b = cuda::load128(bias + 8 * (i % oc8));
  Bf16x8 p, g;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float x = (k < 4 ? lo[k] : hi[k - 4]) + (bias ? __bfloat162float(b[k]) : 0.0f);
    p[k] = __float2bfloat16(x);
    g[k] = __float2bfloat16(cuda::gelu::gelu(x));
  }
  cuda::store128(pre + 8 * i, p);  // read again by the backward pass: cached
  cuda::store128_stream(out + 8 * i, g);
}

void launch(const MatmulGeluForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, n = rows * a.OC;
  const float* product =
      cuda::linear_bf16_to_fp32(l, a.weight, a.inp, rows, a.C, a.OC, "matmul_gelu_forward_bf16 cuda/2");
  const cudaStream_t stream = cuda::stream(l);
  const int block = l.block_size();
  const bool packed = a.OC % 8 == 0 && cuda::aligned16(a.out) && cuda::aligned16(a.pre) &&
                      cuda::aligned16(product) && (!a.bias || cuda::aligned16(a.bias));
  if (packed) {
    WB_LAUNCH(bias_gelu_bf16_packed, cuda::grid_for(n / 8, block), block, 0, stream, cuda::as_cuda(a.out),
              cuda::as_cuda(a.pre), product, cuda::as_cuda(a.bias), n / 8, a.OC / 8);
  } else {
    WB_LAUNCH(bias_gelu_bf16_scalar, cuda::grid_for(n, block), block, 0, stream, cuda::as_cuda(a.out),
              cuda::as_cuda(a.pre), product, cuda::as_cuda(a.bias), n, a.OC);
  }
}

}  // namespace

Variant matmul_gelu_forward_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "cuBLAS GemmEx (bf16 in, fp32 out), then one kernel: bias, pre and gelu from the fp32 sum, rounded once";
  v.params = {block_size_param()};
  v.workspace = [](const Shape& s, const ParamValues&) { return cuda::linear_fp32_bytes(s.B * s.T, s.OC); };
  return v;
}

}  // namespace wb::variants
