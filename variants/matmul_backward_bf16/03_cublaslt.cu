// matmul_backward_bf16, CUDA variant 3: two cuBLASLt matmuls on bf16 with fp32 compute
// that write the bf16 gradients directly, each output rounded once from fp32.
//
// NEVER RUN ON A GPU: written and compiled (nvcc sm_80/sm_90, and the emulator's host
// build, which leaves it out) on a machine without one. Its first `wb check` on a
// device is its first test.
//
// Idea: variant 2's two column-major products, each one cublasLtMatmul with bf16 A, B,
// C and D, compute type CUBLAS_COMPUTE_32F and fp32 alpha and beta:
//   dinp^T    (C x rows) = weight^T (C x OC)   @ dout^T (OC x rows)   N, N, beta 0
//   dweight^T (C x OC)   = inp^T    (C x rows) @ dout   (rows x OC)   N, T, beta 1, C = D
// cuBLASLt forms D = alpha * acc + beta * C in the fp32 scale type and converts that to
// bf16 once, so dinp = bf16(sum) and dweight = bf16(old widened + sum): the contract's
// "old value plus the fp32 sum, rounded once".
// The reduction scheme: variant 2's first form (cuBLAS GemmEx with bf16 C matrices and
// beta 1) was found incorrect on an H200: cuBLAS split the sum over the rows and added
// the partial sums in the output type, up to 1.3 ulp off for dweight and 0.6 ulp for
// dinp. cuBLASLt names that freedom (REDUCTION_SCHEME_INPLACE: partials added in D in the
// output type; OUTPUT_TYPE: partials stored in the output type), so the heuristic is
// told CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = NONE | COMPUTE_TYPE: one sequence
// per dot product, or fp32 partials in the workspace reduced in a separate step
// (device/cuda/cublaslt.h, reduce_in_compute_type). The algorithm of each product is
// the heuristic's first choice, cached per handle, sizes, transposes, alignments
// and workspace size.
// Why it should beat variant 2: no fp32 accumulators making a round trip through memory
// (8 bytes per output beyond the bf16 ones) and no rounding launches: two library calls
// in all. The bias gradient is the separate op matmul_backward_bias.
// Limits: a 32 MiB cuBLASLt workspace; where cuBLASLt offers no algorithm under the
// reduction restriction the launch is skipped (Unsupported). Needs bf16 tensor cores in
// practice (sm_80+); not emulated.
#include <cstddef>
#include <cstdint>
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

#if !WB_EMU  // the emulator cannot run it (Variant::not_emulated): the GPU build only

using cuda::alignment_of;

using Bf16Gemm = cuda::LtGemm;  // on bf16 matrices

void run_gemm(cublasLtHandle_t handle, const Bf16Gemm& g, void* workspace, std::size_t workspace_bytes,
              cudaStream_t stream) {
  const cuda::LtProblem p = cuda::gemm_problem(g, CUBLAS_COMPUTE_32F, CUDA_R_16BF);
  static cuda::PlanCache<cuda::LtGemmKey, cublasLtMatmulAlgo_t> plans;
  const cublasLtMatmulAlgo_t algo = plans.get(cuda::key_of(handle, g, workspace_bytes), [&] {
    return cuda::first_algo_reducing_in_compute_type(
        handle, p, workspace_bytes, alignment_of(g.A), alignment_of(g.B), alignment_of(g.D), [&] {
          return "cuBLASLt offers no bf16 algorithm reducing in fp32 for m=" + std::to_string(g.m) +
                 " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k);
        });
  });
  cuda::run_gemm(handle, p, g, algo, workspace, workspace_bytes, stream);
}

void launch(const MatmulBackwardBf16Args& a, const Launch& l) {
  const int rows = a.B * a.T;
  const cudaStream_t stream = cuda::stream(l);
  cublasLtHandle_t handle = cuda::libraries(l).cublaslt();

  // dinp^T (C x rows, ld C) = weight^T (C x OC, ld C) @ dout^T (OC x rows, ld OC); beta 0: overwritten
  run_gemm(handle, Bf16Gemm{a.C, rows, a.OC, a.weight, a.C, a.dout, a.OC, CUBLAS_OP_N, a.dinp, a.C, 0.0f}, l.workspace,
           l.workspace_bytes, stream);
  // dweight^T (C x OC, ld C) = inp^T (C x rows, ld C) @ dout (rows x OC) + dweight^T; dout
  // is stored as dout^T (OC x rows, ld OC), hence transb = T; beta 1: accumulated
  run_gemm(handle, Bf16Gemm{a.C, a.OC, rows, a.inp, a.C, a.dout, a.OC, CUBLAS_OP_T, a.dweight, a.C, 1.0f}, l.workspace,
           l.workspace_bytes, stream);
}

#endif

}  // namespace

Variant matmul_backward_bf16_cuda_3() {
  return cuda::cublaslt_rung<MatmulBackwardBf16Args>(
      WB_DEVICE_ONLY(launch),
      "two cuBLASLt matmuls writing bf16, fp32 compute, dweight += through beta 1, split-k only in fp32");
}

}  // namespace wb::variants
