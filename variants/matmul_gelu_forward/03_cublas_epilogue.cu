// matmul_gelu_forward, CUDA variant 3: cuBLAS SGEMM, then one kernel for the bias and
// the GELU.
//
// Idea: the product as matmul_forward cuda/5 computes it (variants/matmul/matmul.cuh's
// sgemm_fp32: cuBLAS SGEMM in plain fp32, no TF32), written to pre; then one
// elementwise kernel reads pre once, adds the bias, and writes pre and gelu(pre) (gelu_forward's tanhf formula). With OC % 4 == 0 and every pointer
// 16-byte aligned it moves float4s.
// Why it should beat variant 2: cuBLAS picks a kernel tuned for the device and the
// shape. Against matmul_forward cuda/5 followed by gelu_forward, the bias and the
// GELU share one pass over the activations instead of two.
// Limits: pre still makes one round trip through memory between the two kernels
// (cuBLASLt's GELU_AUX_BIAS epilogue would avoid it); block_size is the epilogue
// kernel's. Any shape runs.
#include "contract/ops/matmul_gelu_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"
#include "variants/matmul/matmul.cuh"

namespace wb::variants {
namespace {

// pre[i] += bias[i % OC] (when there is one), out[i] = gelu(pre[i]); one thread per element.
__global__ void bias_gelu_scalar(float* out, float* pre, const float* bias, int64_t n, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float p = pre[i] + (bias ? bias[i % OC] : 0.0f);
  pre[i] = p;
  out[i] = cuda::gelu::gelu(p);
}

__device__ inline float bias_gelu_lane(float& p, float b) {
  p += b;
  return cuda::gelu::gelu(p);
}

// The same, four columns per thread: n4 = rows * OC / 4, oc4 = OC / 4.
__global__ void bias_gelu_vec4(float* out, float* pre, const float* bias, int64_t n4, int oc4) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const float4 b = bias ? cuda::load4(bias + 4 * (i % oc4)) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 p = cuda::load4(pre + 4 * i);
  float4 g;
  g.x = bias_gelu_lane(p.x, b.x);
  g.y = bias_gelu_lane(p.y, b.y);
  g.z = bias_gelu_lane(p.z, b.z);
  g.w = bias_gelu_lane(p.w, b.w);
  cuda::store4(pre + 4 * i, p);
  cuda::store4(out + 4 * i, g);
}

void launch(const MatmulGeluForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const cudaStream_t stream = cuda::stream(l);
  cuda::matmul::sgemm_fp32(l, a.pre, a.inp, a.weight, rows, a.C, a.OC);
  const int block = l.block_size();
  const int64_t n = int64_t(rows) * a.OC;
  const bool vec4 = a.OC % 4 == 0 && cuda::aligned16(a.out) && cuda::aligned16(a.pre) &&
                    (!a.bias || cuda::aligned16(a.bias));
  if (vec4) {
    WB_LAUNCH(bias_gelu_vec4, cuda::grid_for(n / 4, block), block, 0, stream, a.out, a.pre, a.bias, n / 4, a.OC / 4);
  } else {
    WB_LAUNCH(bias_gelu_scalar, cuda::grid_for(n, block), block, 0, stream, a.out, a.pre, a.bias, n, a.OC);
  }
}

}  // namespace

Variant matmul_gelu_forward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary = "cuBLAS SGEMM into pre (fp32, no TF32), then one kernel adds the bias and writes pre and gelu(pre)";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
