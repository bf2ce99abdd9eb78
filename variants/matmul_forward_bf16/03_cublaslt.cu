// matmul_forward_bf16, CUDA variant 3: one cuBLASLt matmul on bf16, fp32 compute, the
// bias fused into the epilogue, each output rounded once from fp32.
//
// NEVER RUN ON A GPU: written and compiled (nvcc sm_80/sm_90, and the emulator's host
// build, which leaves it out) on a machine without one. Its first `wb check` on a
// device is its first test.
//
// Idea: cublasLtMatmul with bf16 A, B and D, compute type CUBLAS_COMPUTE_32F and an
// fp32 scale type (alpha, beta and the epilogue in fp32), and the CUBLASLT_EPILOGUE_BIAS
// epilogue with a bf16 bias (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE): out = bf16(acc +
// bias), the bias added to the fp32 sum before the one conversion to bf16. With a null
// bias the epilogue is the default one. As in matmul_forward cuda/6 the row-major
// product is the column-major out^T (OC x rows, ld OC) = weight stored C x OC (ld C,
// TRANSA = T) @ inp^T (C x rows, ld C), so the bias runs along D's OC rows as cuBLASLt
// requires.
// The reduction scheme: cuBLAS with a bf16 C was found incorrect on an H200 (variant 2's
// header): it split the sum over C and added the partial sums in the output type, up to
// 0.73 ulp off a single rounding. cuBLASLt names that freedom: a split-k algorithm may
// reduce in place in D (REDUCTION_SCHEME_INPLACE, the output type) or through partials
// stored in the output type (OUTPUT_TYPE). The heuristic is therefore told
// CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = NONE | COMPUTE_TYPE: either one sequence
// per dot product, or fp32 partials in the workspace reduced in a separate step
// (device/cuda/cublaslt.h, reduce_in_compute_type). Either way the only bf16 rounding
// is the final one.
// The algorithm is the heuristic's first choice for this workspace (32 MiB, what cuBLAS
// reserves on Hopper) and the actual pointer alignments, cached per handle, dims,
// epilogue, alignments and workspace size (device/cuda/cublaslt.h, linear_plan). The
// call is run_bf16_linear's, shared with matmul_gelu_forward_bf16 cuda/3: this rung
// chooses the epilogue.
// Why it should beat variant 2: no fp32 accumulator round trip through memory (variant 2
// writes and reads 8 bytes per output beyond the 2 of out) and no second launch: the
// bias is added and the result rounded as the tile is stored.
// Limits: where cuBLASLt offers no algorithm under the reduction restriction (or none
// with the bias epilogue) the launch is skipped (Unsupported): falling back to a
// separate bias kernel on the bf16 out would round twice. Needs bf16 tensor cores in
// practice (sm_80+); not emulated.
#include <cstdint>

#include "contract/ops/matmul_forward.h"
#include "device/cuda/cublaslt.h"
#include "device/cuda/dialect.cuh"

namespace wb::variants {
namespace {

#if !WB_EMU  // the emulator cannot run it (Variant::not_emulated): the GPU build only

// out = bf16(inp @ weight^T + bias): the bias epilogue adds it to the fp32 sum.
void launch(const MatmulForwardBf16Args& a, const Launch& l) {
  cuda::run_bf16_linear(l, {a.weight, a.inp, a.out, nullptr, a.bias}, int64_t(a.B) * a.T, a.C, a.OC,
                        a.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT, "matmul_forward_bf16 cuda/3");
}

#endif

}  // namespace

Variant matmul_forward_bf16_cuda_3() {
  return cuda::cublaslt_rung<MatmulForwardBf16Args>(
      WB_DEVICE_ONLY(launch),
      "one cuBLASLt matmul, bf16 in and out, fp32 compute, bias fused into the epilogue, split-k only in fp32");
}

}  // namespace wb::variants
