#pragma once
// The element step of the AdamW rungs on bf16 parameters (adamw_bf16 cuda/1, the N % 8
// tail of cuda/2, and the planted faults that round it wrongly): the fp32 master
// weight and moments of element i updated in place from the widened gradient. Each
// caller rounds the new master weight into the bf16 parameter its own way.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "variants/adamw/adamw.cuh"

namespace wb::cuda::adamw {

// Returns the new master weight of element i.
__device__ inline float update_master(float* master, float* m, float* v, __nv_bfloat16 grad, int64_t i, const Step& s) {
  float p = master[i], mi = m[i], vi = v[i];
  update(p, mi, vi, __bfloat162float(grad), s);
  master[i] = p;
  m[i] = mi;
  v[i] = vi;
  return p;
}

}  // namespace wb::cuda::adamw
