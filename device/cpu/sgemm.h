#pragma once
// OpenBLAS's sgemm as the CPU rungs built on it call it: row-major matrices, each stored
// packed (its leading dimension is its row length), alpha = 1. OpenBLAS threads on its
// own (its OpenMP build where CMake found it, sharing wb's OpenMP team).
//   sgemm(ta, tb, M, N, K, A, B, beta, C)   C (M x N) = op(A) @ op(B) + beta C, op(A)
//       M x K and op(B) K x N; op(X) is X, or with CblasTrans the transpose of the X
//       stored (A stored K x M, B stored N x K): the leading dimensions follow.
//   sgemm_bt_bias(C, A, B, bias, M, K, N)   C = A (M x K) @ B^T (B stored N x K) plus
//       bias (N values, float or bf16; null: none) on every row: the bias is broadcast
//       into C first and the product added to it (beta = 1), one sgemm in all. The
//       broadcast runs over `threads` OpenMP threads (0: OpenMP's default).
#include <cblas.h>
#include <omp.h>

#include <cstdint>

#include "device/cpu/bf16_lanes.h"

namespace wb::cpu {

inline void sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, const float* A,
                  const float* B, float beta, float* C) {
  const int64_t lda = ta == CblasTrans ? M : K, ldb = tb == CblasTrans ? K : N;
  cblas_sgemm(CblasRowMajor, ta, tb, int(M), int(N), int(K), 1.0f, A, int(lda), B, int(ldb), beta, C, int(N));
}

template <class Bias>
void sgemm_bt_bias(float* C, const float* A, const float* B, const Bias* bias, int64_t M, int64_t K, int64_t N,
                   int threads = 0) {
  float beta = 0.0f;
  if (bias) {
    const auto* b = lanes(bias);
#pragma omp parallel for num_threads(threads > 0 ? threads : omp_get_max_threads()) schedule(static)
    for (int64_t r = 0; r < M; ++r) {
#pragma omp simd
      for (int64_t n = 0; n < N; ++n) C[r * N + n] = widen(b[n]);
    }
    beta = 1.0f;
  }
  sgemm(CblasNoTrans, CblasTrans, M, N, K, A, B, beta, C);
}

}  // namespace wb::cpu
