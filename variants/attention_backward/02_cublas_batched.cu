// attention_backward, CUDA variant 2: cuBLAS strided-batched SGEMMs around
// softmax-backward kernels, with T x T buffers in the workspace.
//
// Idea: make every head a contiguous (T, hs) matrix and let cuBLAS do the five
// products, each one strided-batched call over the B*NH heads:
//   1. permute q, k, v, dout from (B, T, [3]C) into (B, NH, T, hs) buffers (the
//      permutes of attention_forward/heads.cuh, shared with attention_forward cuda/2);
//   2. S  = scale * q k^T                  (T x T per head)
//   3. P  = exp(S - lse), 0 above the diagonal          (kernel, in place)
//   4. dP = dout v^T                       (T x T per head)
//   5. dV = P^T dout                       (written over the permuted v)
//   6. dS = P * (dP - D), D_t = dout_t . out_t, 0 above the diagonal
//                                          (kernel, in place over dP)
//   7. dQ = scale * dS k                   (written over the permuted dout)
//   8. dK = scale * dS^T q                 (written over the permuted k)
//   9. un-permute dQ, dK, dV into dqkv (every element written).
// Row-major (T, n) matrices are handed to column-major cuBLAS as their transposes
// (n, T); each call below states the product it computes in both views.
// Math: fp32 throughout; the math mode is set to CUBLAS_DEFAULT_MATH on every call
// (cuda::cublas_fp32; no TF32: the handle is shared with variants that may have changed
// it).
// Why it should beat variant 1: the 2*hs*T^2 multiply-adds per head run in cuBLAS's
// tiled, register-blocked SGEMM kernels at a good fraction of the fp32 peak, instead
// of uncoalesced scalar loops; the elementwise kernels are coalesced.
// Limits: the causal mask is not exploited (the full T x T products are computed,
// twice the useful work); two (B, NH, T, T) buffers are written and read several
// times: 2 * B * NH * T^2 floats of workspace (805 MB at B=8, T=1024, NH=12) and
// memory traffic that grows like T^2.
#include <cmath>
#include <cstddef>

#include "contract/ops/attention_backward.h"
#include "device/cuda/cublas.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention_forward/heads.cuh"

namespace wb::variants {
namespace {

// Each workspace buffer starts on a 256-byte boundary (64 floats).
constexpr int64_t kAlignFloats = 64;
int64_t aligned(int64_t floats) { return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

// The workspace: four (B, NH, T, hs) buffers (q, k, v, dout; later dK over k, dV
// over v and dQ over dout), then two (B, NH, T, T) buffers (S/P and dP/dS).
struct Workspace {
  int64_t heads_floats;   // one (B, NH, T, hs) buffer
  int64_t scores_floats;  // one (B, NH, T, T) buffer
  std::size_t bytes() const { return std::size_t(4 * heads_floats + 2 * scores_floats) * sizeof(float); }
};

Workspace workspace_for(int64_t B, int64_t T, int64_t C, int64_t NH) {
  return {aligned(B * T * C), aligned(B * NH * T * T)};
}

// One block per row (b, h, t) of S: P = exp(S - lse_t) for t2 <= t, 0 above the
// diagonal. S already holds the scaled scores.
__global__ void softmax_from_lse(float* S, const float* lse, int T) {
  const int64_t row = blockIdx.x;  // (b * NH + h) * T + t, the flat index of lse too
  const int t = int(row % T);
  const float l = lse[row];
  float* s = S + row * T;
  for (int t2 = threadIdx.x; t2 < T; t2 += blockDim.x) s[t2] = t2 <= t ? expf(s[t2] - l) : 0.0f;
}

// One block per row (b, h, t): D_t = dout_t . out_t (block reduction over hs), then
// dP is overwritten with dS = P * (dP - D_t), 0 above the diagonal.
__global__ void softmax_backward(float* dP, const float* P, const float* dout, const float* out, int T, int C, int NH) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const int64_t row = blockIdx.x;  // (b * NH + h) * T + t
  const int t = int(row % T);
  const int64_t bh = row / T;
  const int h = int(bh % NH);
  const int64_t b = bh / NH;
  const int hs = C / NH;
  const int64_t at = (b * T + t) * C + h * hs;
  float d = 0.0f;
  for (int i = threadIdx.x; i < hs; i += blockDim.x) d += dout[at + i] * out[at + i];
  const float D = cuda::block_sum(d, scratch);  // every thread of the block reaches it
  const float* p = P + row * T;
  float* ds = dP + row * T;
  for (int t2 = threadIdx.x; t2 < T; t2 += blockDim.x) ds[t2] = t2 <= t ? p[t2] * (ds[t2] - D) : 0.0f;
}

// C (m x n, column-major, ldc) = alpha * op(A) op(B) for every head, strides in floats.
void gemm(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha,
          const float* A, int lda, int64_t stride_a, const float* Bm, int ldb, int64_t stride_b, float* Cm, int ldc,
          int64_t stride_c, int batch) {
  const float beta = 0.0f;
  WB_CHECK(cublasSgemmStridedBatched(handle, ta, tb, m, n, k, &alpha, A, lda, stride_a, Bm, ldb, stride_b, &beta, Cm,
                                     ldc, stride_c, batch));
}

void launch(const AttentionBackwardArgs& a, const Launch& l) {
  const int B = a.B, T = a.T, C = a.C, NH = a.NH, hs = C / NH, heads = B * NH;
  const float scale = 1.0f / std::sqrt(float(hs));
  const int block = l.block_size();
  const cudaStream_t stream = cuda::stream(l);
  const Workspace w = workspace_for(B, T, C, NH);

  float* q = static_cast<float*>(l.workspace);  // (B, NH, T, hs) each
  float* k = q + w.heads_floats;
  float* v = k + w.heads_floats;
  float* dout = v + w.heads_floats;
  float* P = dout + w.heads_floats;  // (B, NH, T, T) each, row-major per head
  float* dP = P + w.scores_floats;
  float* dQ = dout;  // buffers reused once their contents are no longer read
  float* dK = k;
  float* dV = v;

  const int64_t elems = int64_t(B) * T * C;
  WB_LAUNCH(attention::to_heads, cuda::grid_for(elems, block), block, 0, stream, q, k, v, a.qkv, int64_t(3) * C, B, T,
            C, NH);
  WB_LAUNCH(attention::to_heads, cuda::grid_for(elems, block), block, 0, stream, dout, nullptr, nullptr, a.dout,
            int64_t(C), B, T, C, NH);

  cublasHandle_t handle = cuda::cublas_fp32(l);  // fp32, no TF32
  const int64_t th = int64_t(T) * hs, tt = int64_t(T) * T;

  // S = scale * q k^T. Column-major: S^T (T x T) = k (T x hs, stored as k^T: hs x T,
  // ld hs, transposed) times q^T (hs x T, ld hs). S^T column-major is S row-major.
  gemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs, scale, k, hs, th, q, hs, th, P, T, tt, heads);
  WB_LAUNCH(softmax_from_lse, unsigned(int64_t(heads) * T), block, 0, stream, P, a.lse, T);

  // dP = dout v^T, the same pattern: dP^T = v dout^T.
  gemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs, 1.0f, v, hs, th, dout, hs, th, dP, T, tt, heads);

  // dV = P^T dout (T x hs). Column-major: dV^T (hs x T) = dout^T (hs x T, ld hs) times
  // P (T x T; stored row-major = P^T column-major, ld T, so transposed back).
  gemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, 1.0f, dout, hs, th, P, T, tt, dV, hs, th, heads);

  WB_LAUNCH(softmax_backward, unsigned(int64_t(heads) * T), block, 0, stream, dP, P, a.dout, a.out, T, C, NH);
  const float* dS = dP;

  // dQ = scale * dS k (T x hs). Column-major: dQ^T (hs x T) = k^T (hs x T) times dS^T
  // (dS stored row-major = dS^T column-major, ld T). Reads k, writes over dout.
  gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, hs, T, T, scale, k, hs, th, dS, T, tt, dQ, hs, th, heads);

  // dK = scale * dS^T q (T x hs). Column-major: dK^T (hs x T) = q^T (hs x T) times dS
  // (transposed back from its stored dS^T). Writes over k, read only by the call above.
  gemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, scale, q, hs, th, dS, T, tt, dK, hs, th, heads);

  WB_LAUNCH(attention::from_heads, cuda::grid_for(elems, block), block, 0, stream, a.dqkv, int64_t(3) * C, dQ, dK, dV,
            B, T, C, NH);
}

}  // namespace

Variant attention_backward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "heads permuted to (B, NH, T, hs); S, dP, dV, dQ, dK by strided-batched SGEMMs around softmax kernels";
  v.numeric = NumericClass::fp32;
  v.params = {block_size_param()};
  v.workspace = [](const Shape& s, const ParamValues&) { return workspace_for(s.B, s.T, s.C, s.NH).bytes(); };
  return v;
}

}  // namespace wb::variants
