#pragma once
// A thread's query (or key) row in the naive attention kernels, one thread per
// (b, h, t): its flat index runs over (B, NH, T) with t fastest, which is also lse's
// layout. attention_forward cuda/1 and the naive backward
// (variants/attention/attention_backward_naive.cuh) take their rows from here.
#include <cuda_runtime.h>

#include <cstdint>

namespace wb::cuda::attention_rows {

// bh = b * NH + h is the row's (b, h) row of lse, hs the head size and C3 the row
// stride of qkv (3C).
struct HeadRow {
  int64_t b, bh;
  int h, t, hs;
  int64_t C3;
};

__device__ inline HeadRow head_row(int64_t idx, int T, int C, int NH) {
  const int64_t bh = idx / T;
  return {bh / NH, bh, int(bh % NH), int(idx % T), C / NH, 3 * int64_t(C)};
}

// The row of this thread; b >= B past the last row.
__device__ inline HeadRow thread_row(int T, int C, int NH) {
  return head_row(int64_t(blockIdx.x) * blockDim.x + threadIdx.x, T, C, NH);
}

}  // namespace wb::cuda::attention_rows
