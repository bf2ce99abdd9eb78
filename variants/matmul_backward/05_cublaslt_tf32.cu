// matmul_backward, CUDA variant 5: cuBLASLt with TF32 tensor cores.
//
// Idea: the same two column-major products as variant 4,
//   dinp^T    (C x rows)  = weight^T (C x OC)  @ dout^T (OC x rows)   N, N, beta 0
//   dweight^T (C x OC)   += inp^T    (C x rows) @ dout  (rows x OC)    N, T, beta 1
// through cublasLtMatmul with compute type CUBLAS_COMPUTE_32F_FAST_TF32 (inputs
// rounded to TF32, 10-bit mantissa, on the tensor cores; fp32 accumulation) and C = D
// (in place; with beta = 0 C is not read). The algorithm comes from cuBLASLt's
// heuristic, cached per problem (handle, sizes, transposes, pointer alignments) so
// that later launches skip the host-side query. The bias gradient is the separate op
// matmul_backward_bias.
// Why it should beat variant 4: TF32 tensor cores have several times the fp32 FMA
// throughput.
// Numerics: tf32 class (errors of about 1e-3 relative per product).
// Limits: a 32 MiB cuBLASLt workspace (NVIDIA's recommendation for Hopper). Where
// cuBLASLt offers no algorithm for a problem the launch is skipped (Unsupported).
#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "kernels/cuda/libraries.h"
#include "kernels/cuda/runtime.h"
#include "kernels/errors.h"
#include "kernels/ops/matmul_backward.h"

namespace wb::variants {
namespace {

constexpr std::size_t kLtWorkspaceBytes = std::size_t(32) << 20;

// Owners of cuBLASLt descriptors (destroyed also when a call throws).
struct MatmulDesc {
  cublasLtMatmulDesc_t desc = nullptr;
  ~MatmulDesc() {
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};
struct MatrixLayout {
  cublasLtMatrixLayout_t layout = nullptr;
  ~MatrixLayout() {
    if (layout) cublasLtMatrixLayoutDestroy(layout);
  }
};
struct Preference {
  cublasLtMatmulPreference_t pref = nullptr;
  ~Preference() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
  }
};

// Largest power of two (4..256 bytes) that divides the address.
uint32_t alignment_of(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  uint32_t align = 256;
  while (align > 4 && v % align != 0) align /= 2;
  return align;
}

// One column-major product D (m x n, ld ldd) = A (m x k, ld lda) @ op(B) + beta * D,
// where B is stored k x n (transb N) or n x k (transb T) with leading dimension ldb.
struct LtGemm {
  int m, n, k;
  const float* A;
  int lda;
  const float* B;
  int ldb;
  cublasOperation_t transb;
  float* D;
  int ldd;
  float beta;
};

using AlgoKey = std::tuple<const void*, int, int, int, int, int, int, int, uint32_t, uint32_t, uint32_t, std::size_t>;

void run_lt_gemm(cublasLtHandle_t handle, const LtGemm& g, void* workspace, std::size_t workspace_bytes,
                 cudaStream_t stream) {
  MatmulDesc op;
  WB_CHECK(cublasLtMatmulDescCreate(&op.desc, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  const cublasOperation_t transa = CUBLAS_OP_N;
  WB_CHECK(cublasLtMatmulDescSetAttribute(op.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  WB_CHECK(cublasLtMatmulDescSetAttribute(op.desc, CUBLASLT_MATMUL_DESC_TRANSB, &g.transb, sizeof(g.transb)));

  MatrixLayout a_layout, b_layout, d_layout;
  WB_CHECK(cublasLtMatrixLayoutCreate(&a_layout.layout, CUDA_R_32F, g.m, g.k, g.lda));
  if (g.transb == CUBLAS_OP_N)
    WB_CHECK(cublasLtMatrixLayoutCreate(&b_layout.layout, CUDA_R_32F, g.k, g.n, g.ldb));
  else
    WB_CHECK(cublasLtMatrixLayoutCreate(&b_layout.layout, CUDA_R_32F, g.n, g.k, g.ldb));
  WB_CHECK(cublasLtMatrixLayoutCreate(&d_layout.layout, CUDA_R_32F, g.m, g.n, g.ldd));

  const uint32_t align_a = alignment_of(g.A), align_b = alignment_of(g.B), align_d = alignment_of(g.D);
  const AlgoKey key{handle,        g.m,   g.n,     g.k,     g.lda,   g.ldb,
                    int(g.transb), g.ldd, align_a, align_b, align_d, workspace_bytes};

  static std::mutex mutex;
  static std::map<AlgoKey, cublasLtMatmulAlgo_t> cache;
  cublasLtMatmulAlgo_t algo{};
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) {
      algo = it->second;
      cached = true;
    }
  }
  if (!cached) {
    Preference pref;
    WB_CHECK(cublasLtMatmulPreferenceCreate(&pref.pref));
    const uint64_t max_workspace = workspace_bytes;
    WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                                                  sizeof(max_workspace)));
    WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a,
                                                  sizeof(align_a)));
    WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b,
                                                  sizeof(align_b)));
    WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_d,
                                                  sizeof(align_d)));
    WB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d,
                                                  sizeof(align_d)));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    WB_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, op.desc, a_layout.layout, b_layout.layout, d_layout.layout,
                                            d_layout.layout, pref.pref, 1, &result, &found));
    if (found == 0)
      throw Unsupported("cuBLASLt offers no algorithm for m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
                        " k=" + std::to_string(g.k) + " (TF32 compute)");
    algo = result.algo;
    std::lock_guard<std::mutex> lock(mutex);
    cache.emplace(key, algo);
  }

  const float one = 1.0f;
  WB_CHECK(cublasLtMatmul(handle, op.desc, &one, g.A, a_layout.layout, g.B, b_layout.layout, &g.beta, g.D,
                          d_layout.layout, g.D, d_layout.layout, &algo, workspace, workspace_bytes, stream));
}

void launch(const MatmulBackwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  cudaStream_t stream = cuda::stream(l);
  cublasLtHandle_t handle = cuda::libraries(l).cublaslt();
  void* ws = l.workspace;  // kLtWorkspaceBytes for cuBLASLt

  // dinp^T (C x rows, ld C) = weight^T (C x OC, ld C) @ dout^T (OC x rows, ld OC)
  run_lt_gemm(handle, LtGemm{a.C, rows, a.OC, a.weight, a.C, a.dout, a.OC, CUBLAS_OP_N, a.dinp, a.C, 0.0f}, ws,
              kLtWorkspaceBytes, stream);
  // dweight^T (C x OC, ld C) += inp^T (C x rows, ld C) @ dout (rows x OC); dout is
  // stored as dout^T (OC x rows, ld OC), hence transb = T
  run_lt_gemm(handle, LtGemm{a.C, a.OC, rows, a.inp, a.C, a.dout, a.OC, CUBLAS_OP_T, a.dweight, a.C, 1.0f}, ws,
              kLtWorkspaceBytes, stream);
}

}  // namespace

Variant matmul_backward_cuda_5() {
  Variant v = Variant::of(&launch);
  v.op = "matmul_backward";
  v.backend = Backend::cuda;
  v.id = 5;
  v.name = "cublaslt_tf32";
  v.summary = "two cuBLASLt matmuls on TF32 tensor cores, beta = 0 for dinp and 1 for dweight";
  v.numeric = NumericClass::tf32;
  v.workspace = [](const Shape&, const ParamValues&) { return kLtWorkspaceBytes; };
  return v;
}

}  // namespace wb::variants
