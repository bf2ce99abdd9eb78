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
#if !WB_EMU
#include <cublasLt.h>
#endif

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>

#include "base/errors.h"
#include "contract/ops/matmul_backward.h"
#include "device/cuda/cublaslt.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/libraries.h"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

using cuda::kLtWorkspaceBytes;

#if !WB_EMU  // the emulator cannot run it (Variant::not_emulated): the GPU build only

using cuda::alignment_of;
using cuda::LtGemm;  // on fp32 matrices

void run_lt_gemm(cublasLtHandle_t handle, const LtGemm& g, void* workspace, std::size_t workspace_bytes,
                 cudaStream_t stream) {
  const cuda::LtProblem p = cuda::gemm_problem(g, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);
  static cuda::PlanCache<cuda::LtGemmKey, cublasLtMatmulAlgo_t> plans;
  const cublasLtMatmulAlgo_t algo = plans.get(cuda::key_of(handle, g, workspace_bytes), [&] {
    const cuda::LtMatmulPreference pref =
        cuda::preference_for(workspace_bytes, alignment_of(g.A), alignment_of(g.B), alignment_of(g.D));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    WB_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, p.desc.get(), p.a.get(), p.b.get(), p.d.get(), p.d.get(),
                                            pref.get(), 1, &result, &found));
    if (found == 0)
      throw Unsupported("cuBLASLt offers no algorithm for m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
                        " k=" + std::to_string(g.k) + " (TF32 compute)");
    return result.algo;
  });
  cuda::run_gemm(handle, p, g, algo, workspace, workspace_bytes, stream);
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

#endif

}  // namespace

Variant matmul_backward_cuda_5() {
  return cuda::cublaslt_rung<MatmulBackwardArgs>(
      WB_DEVICE_ONLY(launch), "two cuBLASLt matmuls on TF32 tensor cores, beta = 0 for dinp and 1 for dweight",
      NumericClass::tf32);
}

}  // namespace wb::variants
