#pragma once
// Pieces shared by the CUDA variants of attention_forward (heads.cuh holds the
// permutes of the batched-SGEMM variants).
//
// Layout reminder: qkv is (B, T, 3C); for token (b, t) the query of head h starts at
// qkv[(b*T + t)*3C + h*hs], its key C floats further, its value 2C floats further.
// out is (B, T, C) with head h at channels h*hs..; lse is (B, NH, T).
#include <cuda_runtime.h>

#include <cstdint>

#include "base/math_constants.h"
#include "contract/ops/attention_forward.h"

namespace wb::variants::attention {

using math::kLn2;
using math::kLog2e;

inline int head_size(const AttentionForwardArgs& a) { return a.C / a.NH; }

// Offset of the first float of (b, t) in qkv, and in out.
__host__ __device__ inline int64_t qkv_row(int b, int t, int T, int C) { return (int64_t(b) * T + t) * 3 * C; }
__host__ __device__ inline int64_t out_row(int b, int t, int T, int C) { return (int64_t(b) * T + t) * C; }

}  // namespace wb::variants::attention
