// matmul_forward_bf16, CUDA variant 2: cuBLAS GemmEx on bf16 with fp32 compute into an
// fp32 accumulator, then one kernel adds the bias and rounds each output once.
//
// Idea: cublasGemmEx computes acc = inp @ weight^T with bf16 A and B, an fp32 C in the
// workspace, CUBLAS_COMPUTE_32F and beta = 0: products and sums in fp32 on the tensor
// cores. A second kernel writes out = bf16(acc + bias), the bias added in fp32: each
// output rounded once to bf16, as the contract asks. The row-major product maps onto
// column-major cuBLAS as in variants/matmul/matmul.cuh: acc^T (OC x rows) = weight (C x
// OC, transposed) times inp^T (C x rows) (cuda::linear_bf16_to_fp32, device/cuda/cublas.h,
// shared with matmul_gelu_forward_bf16 cuda/2).
// Why not a bf16 C with the bias copied into out and added through beta = 1 (this
// variant's first form, one launch less): cuBLAS may split the sum over C and add the
// partial sums in the output's type. On an H200 that form left 24% of the outputs at
// B=1 T=130 C=256 OC=520 more than half an ulp off (up to 0.73 ulp; results/nvidia-h200/
// check/matmul_forward_bf16.json), so the emulator now takes that freedom too
// (emu/cublas.h), and tests/planted keeps the old form as a fault it must catch.
// Why it should beat variant 1: cuBLAS picks a tensor-core kernel tuned for the device
// and the shape. Cost: the accumulator's fp32 write and read, 8 bytes per output
// beyond the 2 of out (for GPT-2's small-C layers, on the order of the GEMM's own
// time); cuBLASLt's bias epilogue with a reduction scheme in the compute type would
// save them.
// Limits: any shape; the workspace holds rows x OC floats.
#include <cuda_bf16.h>

#include <cstdint>

#include "contract/ops/matmul_forward.h"
#include "device/cuda/cublas.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

// out[r, o] = bf16(acc[r, o] + bias[o]) (no bias: bf16(acc)), one thread per element.
__global__ void add_bias_round(__nv_bfloat16* out, const float* acc, const __nv_bfloat16* bias, int64_t n, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(bias ? acc[i] + __bfloat162float(bias[i % OC]) : acc[i]);
}

void launch(const MatmulForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const float* acc = cuda::linear_bf16_to_fp32(l, a.weight, a.inp, rows, a.C, a.OC, "matmul_forward_bf16 cuda/2");
  const int block = l.block_size();
  WB_LAUNCH(add_bias_round, cuda::grid_for(rows * a.OC, block), block, 0, cuda::stream(l), cuda::as_cuda(a.out), acc,
            cuda::as_cuda(a.bias), rows * a.OC, a.OC);
}

}  // namespace

Variant matmul_forward_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "cuBLAS GemmEx, bf16 in, fp32 compute into an fp32 accumulator; one kernel adds the bias and rounds once";
  v.params = {block_size_param()};
  v.workspace = [](const Shape& s, const ParamValues&) { return cuda::linear_fp32_bytes(s.B * s.T, s.OC); };
  return v;
}

}  // namespace wb::variants
