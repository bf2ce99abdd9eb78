#pragma once
// A thread's query (or key) row in the naive attention kernels, one thread per
// (b, h, t): its flat index runs over (B, NH, T) with t fastest, which is also lse's
// layout. attention_forward cuda/1 and the naive backward
// (variants/attention/attention_backward_naive.cuh) take their rows from here.
#include <cuda_runtime.h>

#include <cstdint>

namespace wb::cuda::attention_rows {

// bh = b * NH + h is the row's (b, h) row of lse, hs the head size and C3 the row
// stride of qkv (3C). Index: the type of b and bh (int64_t, or int where B * NH fits,
// which keeps the divisions 32-bit).
template <class Index>
struct HeadRow {
  Index b, bh;
  int h, t, hs;
  int64_t C3;
};

template <class Index = int64_t>
__device__ inline HeadRow<Index> head_row(int64_t idx, int T, int C, int NH) {
  const Index bh = Index(idx / T);
  return {bh / NH, bh, int(bh % NH), int(idx % T), C / NH, 3 * int64_t(C)};
}

}  // namespace wb::cuda::attention_rows
