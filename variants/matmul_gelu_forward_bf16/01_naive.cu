// matmul_gelu_forward_bf16, CUDA variant 1: the naive port, one thread per output.
//
// Idea: one thread per output element walks row r of inp and row o of weight together
// over the C channels, widening each bf16 and accumulating in fp32 from the bias; it
// writes pre = bf16(sum) and out = bf16(gelu(sum)) -- the GELU of the unrounded sum,
// each output rounded once.
// Why: the baseline of the bf16 ladder; plainly correct for every shape.
// Limits: as matmul_forward_bf16 cuda/1: no load coalesces, nothing reused on chip but
// what the caches catch, 2*C 16-bit loads per output.
#include <cuda_bf16.h>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/matmul_naive.cuh"
#include "kernels/cuda/packed.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_gelu_forward.h"

namespace wb::variants {
namespace {

void launch(const MatmulGeluForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  WB_LAUNCH(cuda::matmul_naive::thread_per_output<__nv_bfloat16, true>, cuda::grid_for(rows * a.OC, block), block, 0,
            cuda::stream(l), cuda::as_cuda(a.out), cuda::as_cuda(a.pre), cuda::as_cuda(a.inp), cuda::as_cuda(a.weight),
            cuda::as_cuda(a.bias), rows, a.C, a.OC);
}

}  // namespace

Variant matmul_gelu_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary =
      "one thread per output: an fp32 dot product of widened rows; pre and gelu of the unrounded sum, rounded once";
  v.params = {block_size_param()};
  v.launch_limit = cuda::matmul::thread_per_output_limit;
  return v;
}

}  // namespace wb::variants
