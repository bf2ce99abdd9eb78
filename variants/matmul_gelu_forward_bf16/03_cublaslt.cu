// matmul_gelu_forward_bf16, CUDA variant 3: one cuBLASLt matmul on bf16 with fp32
// compute and the GELU_AUX(_BIAS) epilogue: out = gelu(pre) in D, pre as the aux output.
//
// NEVER RUN ON A GPU: written and compiled (nvcc sm_80/sm_90, and the emulator's host
// build, which leaves it out) on a machine without one. Its first `wb check` on a
// device is its first test, and it may well fail it (see "Unconfirmed" below).
//
// Idea: cublasLtMatmul with bf16 A, B and D, CUBLAS_COMPUTE_32F, fp32 scale type, and
// the epilogue CUBLASLT_EPILOGUE_GELU_AUX_BIAS (a bf16 bias, BIAS_DATA_TYPE) or, with a
// null bias, CUBLASLT_EPILOGUE_GELU_AUX. cuBLASLt adds the bias to the product, stores
// that GELU input in the aux matrix (EPILOGUE_AUX_POINTER = pre, EPILOGUE_AUX_DATA_TYPE
// bf16, EPILOGUE_AUX_LD = OC) and the GELU of it in D (= out). The product is the
// column-major out^T (OC x rows, ld OC) = weight stored C x OC (ld C, TRANSA = T) @
// inp^T (C x rows, ld C), as in matmul_forward_bf16 cuda/3, so the bias runs along
// D's OC rows and pre has D's shape and leading dimension.
// As in matmul_forward_bf16 cuda/3 the heuristic is restricted to the reduction schemes
// NONE | COMPUTE_TYPE (device/cuda/cublaslt.h, reduce_in_compute_type): cuBLAS with a
// bf16 C was found on an H200 to add split-k partial sums in the output type (variant
// 2 of matmul_forward_bf16), which would round pre and out more than once.
// Unconfirmed (the docs do not say; the first device check decides):
//   - which GELU cuBLASLt computes. cublasLt.h and the cuBLAS docs (cublasLtEpilogue_t)
//     say only "GELU point-wise transform"; the op's contract is gelu_forward's tanh
//     approximation. llm.c's bf16 step uses this epilogue for GPT-2's tanh GELU, which
//     suggests, but does not show, that it is the tanh form, and not to which accuracy
//     (a fast tanh would cost ulps that the tolerance may not allow);
//   - that out is the GELU of the unrounded fp32 sum and not of the bf16 aux value
//     (the contract rounds once). The docs describe the aux matrix as the GELU input
//     output, nothing about the order of the conversion.
// Doc facts relied on (cublasLt.h, CUDA 13.1 / cuBLAS 13.1; cuBLAS docs,
// cublasLtMatmulDescAttributes_t): EPILOGUE_AUX_LD for GELU is in elements, must be
// divisible by 8 and at least D's row count (OC here), hence the OC % 8 == 0
// requirement; the aux type defaults to D's; the heuristic reads the aux pointer's
// value for its alignment (it is in the plan's key). Nothing more about the aux
// pointer's alignment is documented there.
// Why it should beat variant 2: no fp32 product making a round trip through memory
// (4 bytes an element written and read) and no epilogue launch: bias, pre and GELU
// happen as the tile is stored.
// Limits: OC % 8 == 0; a 32 MiB cuBLASLt workspace; where cuBLASLt offers no
// algorithm under the reduction restriction with this epilogue the launch is skipped
// (Unsupported). Needs bf16 tensor cores in practice (sm_80+); not emulated.
#include <cstdint>

#include "contract/ops/matmul_gelu_forward.h"
#include "device/cuda/cublaslt.h"
#include "device/cuda/dialect.cuh"

namespace wb::variants {
namespace {

#if !WB_EMU  // the emulator cannot run it (Variant::not_emulated): the GPU build only

// out = gelu(pre) in D, pre = inp @ weight^T + bias as the aux matrix (bf16, D's shape,
// leading dimension OC). The heuristic reads the aux pointer's value for its alignment:
// pre is in the plan's key (LinearOperands).
void launch(const MatmulGeluForwardBf16Args& a, const Launch& l) {
  cuda::run_bf16_linear(l, {a.weight, a.inp, a.out, a.pre, a.bias}, int64_t(a.B) * a.T, a.C, a.OC,
                        a.bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX,
                        "matmul_gelu_forward_bf16 cuda/3");
}

#endif

}  // namespace

Variant matmul_gelu_forward_bf16_cuda_3() {
  Variant v = cuda::cublaslt_rung<MatmulGeluForwardBf16Args>(
      WB_DEVICE_ONLY(launch),
      "one cuBLASLt matmul, bf16, fp32 compute, GELU_AUX_BIAS epilogue writes out and pre, split-k only in fp32");
  v.requirements = {{"OC % 8 == 0", [](const Shape& s) { return s.OC % 8 == 0; }}};
  return v;
}

}  // namespace wb::variants
