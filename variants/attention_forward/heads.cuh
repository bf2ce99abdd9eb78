#pragma once
// The permutes of the batched-SGEMM attention variants (attention_forward cuda/2,
// attention_backward cuda/2): token-major (B, T, C) rows to head-major (B, NH, T, hs)
// buffers and back. Apart from common.cuh so that only the files that launch them
// compile them.
#include "variants/attention_forward/common.cuh"

namespace wb::variants::attention {

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
