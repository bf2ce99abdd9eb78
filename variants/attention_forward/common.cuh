#pragma once
// Pieces shared by the CUDA variants of attention_forward (and attention_backward,
// whose cuBLAS variant permutes the same tensors).
//
// Layout reminder: qkv is (B, T, 3C); for token (b, t) the query of head h starts at
// qkv[(b*T + t)*3C + h*hs], its key C floats further, its value 2C floats further.
// out is (B, T, C) with head h at channels h*hs..; lse is (B, NH, T).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/ops/attention_forward.h"

namespace wb::variants::attention {

constexpr float kLog2e = 1.4426950408889634f;  // log2(e): exp(x) = exp2(x * log2(e))
constexpr float kLn2 = 0.6931471805599453f;    // ln(2): ln(x) = log2(x) * ln(2)

inline int head_size(const AttentionForwardArgs& a) { return a.C / a.NH; }

// Offset of the first float of (b, t) in qkv, and in out.
__host__ __device__ inline int64_t qkv_row(int b, int t, int T, int C) { return (int64_t(b) * T + t) * 3 * C; }
__host__ __device__ inline int64_t out_row(int b, int t, int T, int C) { return (int64_t(b) * T + t) * C; }

// The head-major layout of the batched-SGEMM variants (attention_forward cuda/2,
// attention_backward cuda/2): channel c of token (b, t), element i = (b*T + t)*C + c of
// a token-major (B, T, C) tensor, lives at ((b*NH + h)*T + t)*hs + d of a (B, NH, T,
// hs) buffer, with h = c / hs and d = c % hs.
__host__ __device__ inline int64_t head_major(int64_t i, int T, int C, int NH) {
  const int c = int(i % C);
  const int64_t bt = i / C;
  const int t = int(bt % T);
  const int64_t b = bt / T;
  const int hs = C / NH;
  return ((b * NH + c / hs) * T + t) * hs + c % hs;
}

namespace {  // the kernels: every file that includes this header gets its own copy

// Token-major rows into head-major buffers. Row b*T + t of `rows` (row_stride floats
// apart) holds up to three tensors of C channels, at offsets 0, C and 2C (qkv: q, k, v),
// or one (dout); tensor j goes to heads_j, a (B, NH, T, hs) buffer (null: not copied).
// One thread per (b, t, c): the reads are coalesced.
__global__ void to_heads(float* heads0, float* heads1, float* heads2, const float* rows, int64_t row_stride, int B,
                         int T, int C, int NH) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= int64_t(B) * T * C) return;
  const int64_t dst = head_major(i, T, C, NH);
  const float* row = rows + (i / C) * row_stride + i % C;
  heads0[dst] = row[0];
  if (heads1) heads1[dst] = row[C];
  if (heads2) heads2[dst] = row[2 * C];
}

// The inverse: head-major buffers back into token-major rows (heads_j to offset j*C of
// each row; null: not written). One thread per (b, t, c): the writes are coalesced.
__global__ void from_heads(float* rows, int64_t row_stride, const float* heads0, const float* heads1,
                           const float* heads2, int B, int T, int C, int NH) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= int64_t(B) * T * C) return;
  const int64_t src = head_major(i, T, C, NH);
  float* row = rows + (i / C) * row_stride + i % C;
  row[0] = heads0[src];
  if (heads1) row[C] = heads1[src];
  if (heads2) row[2 * C] = heads2[src];
}

}  // namespace

}  // namespace wb::variants::attention
