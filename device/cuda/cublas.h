#pragma once
// What the cuBLAS rungs share: the state each launch sets on the shared handle, and
// the bf16 linear layer's product into an fp32 accumulator in the launch's workspace
// (the first step of the bf16 rungs that round each output once themselves). Both
// builds: under the emulator cuBLAS is emu/cublas.h.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "contract/variant.h"
#include "device/cuda/libraries.h"
#include "device/cuda/runtime.h"

namespace wb::cuda {

// The launch's cuBLAS handle in the state the fp32-compute rungs rely on. The handle is
// shared by every variant of the context, so each launch sets it: the default math mode
// (no TF32 tensor cores: fp32 products stay in the fp32 class), alpha and beta read from
// the host, atomics not allowed (cuBLAS's results are then bitwise the same run to
// run). The handle is on the launch's stream already; cublasSetStream would reset the
// fixed workspace a CUDA graph needs (CudaLibraries, device/cuda/libraries.h).
inline cublasHandle_t cublas_fp32(const Launch& l) {
  cublasHandle_t handle = libraries(l).cublas();
  WB_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  WB_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  WB_CHECK(cublasSetAtomicsMode(handle, CUBLAS_ATOMICS_NOT_ALLOWED));
  return handle;
}

// The workspace linear_bf16_to_fp32 writes: rows x OC floats.
inline std::size_t linear_fp32_bytes(int64_t rows, int64_t OC) { return std::size_t(rows * OC) * sizeof(float); }

// The bf16 linear layer's product, unrounded: acc (rows x OC, row-major fp32, the
// launch's workspace) = inp (rows x C, bf16) @ weight^T (weight OC x C, bf16), by one
// cublasGemmEx with fp32 compute, beta 0 and an fp32 C, so that nothing is rounded to
// bf16 yet (a bf16 C lets cuBLAS add split-k partial sums in bf16: emu/cublas.h). The
// row-major product is the column-major acc^T (OC x rows, ld OC) = weight stored C x OC
// (ld C, transposed) @ inp^T (C x rows, ld C). Returns acc; std::logic_error naming
// `who` when the workspace is smaller than linear_fp32_bytes.
inline float* linear_bf16_to_fp32(const Launch& l, const void* weight, const void* inp, int64_t rows, int C, int OC,
                                  const char* who) {
  if (l.workspace_bytes < linear_fp32_bytes(rows, OC))
    throw std::logic_error(std::string(who) + ": workspace too small for the fp32 product");
  auto* acc = static_cast<float*>(l.workspace);
  const float alpha = 1.0f, beta = 0.0f;
  WB_CHECK(cublasGemmEx(cublas_fp32(l), CUBLAS_OP_T, CUBLAS_OP_N, OC, int(rows), C, &alpha, weight, CUDA_R_16BF, C, inp,
                        CUDA_R_16BF, C, &beta, acc, CUDA_R_32F, OC, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return acc;
}

}  // namespace wb::cuda
