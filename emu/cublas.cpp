#include "emu/cublas.h"

#include <cblas.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "base/bf16.h"

namespace wb {
inline namespace emu_build {

struct cublasContext {
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointers = CUBLAS_POINTER_MODE_HOST;
};

namespace {

// Elements a column-major rows x cols matrix with leading dimension ld spans.
long long span(int rows, int cols, int ld) { return rows == 0 || cols == 0 ? 0 : (long long)(cols - 1) * ld + rows; }

bool inside(const void* p, long long elements, std::size_t element_bytes = sizeof(float)) {
  return elements == 0 || ::wb::emu::in_device_memory(p, std::size_t(elements) * element_bytes);
}

cublasStatus_t fault(const std::string& what) {
  ::wb::emu::fault(::wb::emu::kIllegalAddress, "memcheck: " + what);
  return CUBLAS_STATUS_EXECUTION_FAILED;
}

CBLAS_TRANSPOSE trans(cublasOperation_t op) { return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans; }

// What every GEMM entry point answers before it computes, in this order: no handle, a
// plan (no kernel of ours to list), a sticky fault from before, a size or leading
// dimension out of range, alpha or beta outside device memory in pointer mode device.
// Nothing when the call goes on.
std::optional<cublasStatus_t> refused(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                      int lda, int ldb, int ldc, int batch, const void* alpha, const void* beta,
                                      const char* name) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (::wb::emu::planning()) return CUBLAS_STATUS_SUCCESS;
  if (::wb::emu::sticky_error()) return CUBLAS_STATUS_EXECUTION_FAILED;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < (ta == CUBLAS_OP_N ? m : k) || ldb < (tb == CUBLAS_OP_N ? k : n) ||
      ldc < m || lda < 1 || ldb < 1 || ldc < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (h->pointers == CUBLAS_POINTER_MODE_DEVICE && (!inside(alpha, 1) || !inside(beta, 1)))
    return fault(std::string(name) + ": alpha or beta is not in device memory (pointer mode device)");
  return std::nullopt;
}

// A recorded call's answer when the graph replays it, as a kernel launch's: success, or
// the fault the call raised, else a launch failure.
int replayed(cublasStatus_t status) {
  if (status == CUBLAS_STATUS_SUCCESS) return ::wb::emu::kSuccess;
  return ::wb::emu::sticky_error() ? ::wb::emu::sticky_error() : int(::wb::emu::kLaunchFailure);
}

// The elements the matrices A (m x k, or k x m transposed), B (k x n, or n x k) and C
// (m x n) span.
struct Spans {
  long long a, b, c;
};
Spans spans(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int lda, int ldb, int ldc) {
  return {ta == CUBLAS_OP_N ? span(m, k, lda) : span(k, m, lda), tb == CUBLAS_OP_N ? span(k, n, ldb) : span(n, k, ldb),
          span(m, n, ldc)};
}

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const float* alpha, const float* A, int lda, long long sa, const float* B, int ldb, long long sb,
                    const float* beta, float* C, int ldc, long long sc, int batch, const char* name) {
  if (const auto answer = refused(h, ta, tb, m, n, k, lda, ldb, ldc, batch, alpha, beta, name)) return *answer;
  if (::wb::emu::capturing()) {
    // Recorded as a graph holds it: the handle's settings, and alpha and beta by value
    // when they are host pointers (cuBLAS reads those at the call, not at replay).
    cublasContext settings = *h;
    const bool host = h->pointers == CUBLAS_POINTER_MODE_HOST;
    const float a = host ? *alpha : 0.0f, b = host ? *beta : 0.0f;
    ::wb::emu::record(name, [=]() mutable {
      const cublasStatus_t status = gemm(&settings, ta, tb, m, n, k, host ? &a : alpha, A, lda, sa, B, ldb, sb,
                                         host ? &b : beta, C, ldc, sc, batch, name);
      return replayed(status);
    });
    return CUBLAS_STATUS_SUCCESS;
  }
  const auto [a_span, b_span, c_span] = spans(ta, tb, m, n, k, lda, ldb, ldc);
  for (int i = 0; i < batch; ++i) {
    if (!inside(A + i * sa, a_span))
      return fault(std::string(name) + ": matrix A of batch " + std::to_string(i) + " reaches outside device memory");
    if (!inside(B + i * sb, b_span))
      return fault(std::string(name) + ": matrix B of batch " + std::to_string(i) + " reaches outside device memory");
    if (!inside(C + i * sc, c_span))
      return fault(std::string(name) + ": matrix C of batch " + std::to_string(i) + " reaches outside device memory");
  }
  // Counting: what the call computes and moves (C read too when beta is not 0).
  if (!::wb::emu::count_library_call(
          name, 2.0 * m * n * k * batch,
          4.0 * batch * (double(m) * k + double(k) * n + double(m) * n * (*beta != 0.0f ? 2 : 1)),
          ::wb::emu::LaunchCounters::Gemm{m, n, k, batch}))
    return CUBLAS_STATUS_SUCCESS;  // a counting run of sampled blocks: nothing is validated
  for (int i = 0; i < batch; ++i)
    cblas_sgemm(CblasColMajor, trans(ta), trans(tb), m, n, k, *alpha, A + i * sa, lda, B + i * sb, ldb, *beta,
                C + i * sc, ldc);
  return CUBLAS_STATUS_SUCCESS;
}

std::size_t bytes_of(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }

// The span elements of a column-major matrix of type t, as fp32 (bf16 widened exactly).
std::vector<float> widened(const void* p, cudaDataType_t t, long long elements) {
  std::vector<float> out(std::size_t(std::max(elements, 1LL)));
  for (long long i = 0; i < elements; ++i)
    out[std::size_t(i)] = t == CUDA_R_32F ? static_cast<const float*>(p)[i] : to_float(static_cast<const bf16*>(p)[i]);
  return out;
}

}  // namespace

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType_t Atype, int lda, const void* B,
                            cudaDataType_t Btype, int ldb, const void* beta, void* C, cudaDataType_t Ctype, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  auto supported = [](cudaDataType_t t) { return t == CUDA_R_32F || t == CUDA_R_16BF; };
  if (compute != CUBLAS_COMPUTE_32F || !supported(Atype) || Atype != Btype || !supported(Ctype))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (const auto answer = refused(h, ta, tb, m, n, k, lda, ldb, ldc, 1, alpha, beta, "cublasGemmEx")) return *answer;
  if (::wb::emu::capturing()) {
    // As gemm() records it: the settings, and host-pointer alpha and beta, by value.
    cublasContext settings = *h;
    const bool host = h->pointers == CUBLAS_POINTER_MODE_HOST;
    const float a = host ? *static_cast<const float*>(alpha) : 0.0f, b = host ? *static_cast<const float*>(beta) : 0.0f;
    ::wb::emu::record("cublasGemmEx", [=]() mutable {
      const cublasStatus_t status = cublasGemmEx(&settings, ta, tb, m, n, k, host ? &a : alpha, A, Atype, lda, B, Btype,
                                                 ldb, host ? &b : beta, C, Ctype, ldc, compute, CUBLAS_GEMM_DEFAULT);
      return replayed(status);
    });
    return CUBLAS_STATUS_SUCCESS;
  }
  const auto [a_span, b_span, c_span] = spans(ta, tb, m, n, k, lda, ldb, ldc);
  if (!inside(A, a_span, bytes_of(Atype))) return fault("cublasGemmEx: matrix A reaches outside device memory");
  if (!inside(B, b_span, bytes_of(Btype))) return fault("cublasGemmEx: matrix B reaches outside device memory");
  if (!inside(C, c_span, bytes_of(Ctype))) return fault("cublasGemmEx: matrix C reaches outside device memory");
  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  if (!::wb::emu::count_library_call("cublasGemmEx", 2.0 * m * n * k,
                                     double(bytes_of(Atype)) * m * k + double(bytes_of(Btype)) * k * n +
                                         double(bytes_of(Ctype)) * m * n * (b != 0.0f ? 2 : 1),
                                     ::wb::emu::LaunchCounters::Gemm{m, n, k, 1}))
    return CUBLAS_STATUS_SUCCESS;  // a counting run of sampled blocks: nothing is validated
  const std::vector<float> a_f = widened(A, Atype, a_span), b_f = widened(B, Btype, b_span);
  // Only the m x n elements of C are read (beta != 0) and written; the gaps between
  // columns (ldc > m) keep what they held.
  std::vector<float> c_f =
      b != 0.0f ? widened(C, Ctype, c_span) : std::vector<float>(std::size_t(std::max(c_span, 1LL)));
  if (m > 0 && n > 0) {
    if (Ctype == CUDA_R_16BF && k >= 2) {
      // cuBLAS's freedom with a bf16 C, taken every time: the sum over k in two halves,
      // the first half (with beta C) rounded to bf16 in C, the second added to it and
      // the total rounded again (cuBLAS may split k and reduce the partial sums in C's
      // own type: on an H200 its bf16 outputs were off by up to 1.3 ulp of one rounding).
      const int k1 = k / 2;
      const float* a2 = a_f.data() + (ta == CUBLAS_OP_N ? (long long)k1 * lda : k1);
      const float* b2 = b_f.data() + (tb == CUBLAS_OP_N ? k1 : (long long)k1 * ldb);
      cblas_sgemm(CblasColMajor, trans(ta), trans(tb), m, n, k1, a, a_f.data(), lda, b_f.data(), ldb, b, c_f.data(),
                  ldc);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          float& x = c_f[std::size_t((long long)j * ldc + i)];
          x = to_float(to_bf16(x));
        }
      cblas_sgemm(CblasColMajor, trans(ta), trans(tb), m, n, k - k1, a, a2, lda, b2, ldb, 1.0f, c_f.data(), ldc);
    } else {
      cblas_sgemm(CblasColMajor, trans(ta), trans(tb), m, n, k, a, a_f.data(), lda, b_f.data(), ldb, b, c_f.data(),
                  ldc);
    }
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const long long e = (long long)j * ldc + i;
      if (Ctype == CUDA_R_32F)
        static_cast<float*>(C)[e] = c_f[std::size_t(e)];
      else
        static_cast<bf16*>(C)[e] = to_bf16(c_f[std::size_t(e)]);
    }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t) {
  return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->pointers = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t) {
  return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  // Each status answers with its enumerator's own spelling, written once.
#define WB_STATUS_NAME(s) \
  case s:                 \
    return #s
  switch (status) {
    WB_STATUS_NAME(CUBLAS_STATUS_SUCCESS);
    WB_STATUS_NAME(CUBLAS_STATUS_NOT_INITIALIZED);
    WB_STATUS_NAME(CUBLAS_STATUS_INVALID_VALUE);
    WB_STATUS_NAME(CUBLAS_STATUS_EXECUTION_FAILED);
    WB_STATUS_NAME(CUBLAS_STATUS_NOT_SUPPORTED);
  }
#undef WB_STATUS_NAME
  return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) {
  static thread_local std::string text;
  text =
      status == CUBLAS_STATUS_EXECUTION_FAILED
          ? "the GPU program failed to execute (emulator: " + ::wb::emu::error_string(::wb::emu::kIllegalAddress) + ")"
      : status == CUBLAS_STATUS_INVALID_VALUE ? "an unsupported value or parameter was passed to the function"
      : status == CUBLAS_STATUS_SUCCESS       ? "success"
                                              : "cuBLAS error";
  return text.c_str();
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
                           const float* beta, float* C, int ldc) {
  return gemm(handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, "cublasSgemm");
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float* alpha, const float* A, int lda,
                                         long long stride_a, const float* B, int ldb, long long stride_b,
                                         const float* beta, float* C, int ldc, long long stride_c, int batch) {
  return gemm(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch,
              "cublasSgemmStridedBatched");
}

}  // namespace emu_build
}  // namespace wb
