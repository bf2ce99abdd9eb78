#pragma once
// A tensor of an argument struct as a kernel templated on its storage takes it: fp32
// as it is, wb::bf16 as CUDA's bf16 (as_cuda). For the launches that serve an op and
// its bf16 twin with one template (matmul_naive.cuh, layernorm_naive.cuh).
#include <cuda_bf16.h>

#include "base/bf16.h"
#include "device/cuda/packed.cuh"

namespace wb::cuda {

inline float* as_device(float* p) { return p; }
inline const float* as_device(const float* p) { return p; }
inline __nv_bfloat16* as_device(bf16* p) { return as_cuda(p); }
inline const __nv_bfloat16* as_device(const bf16* p) { return as_cuda(p); }

}  // namespace wb::cuda
