// matmul_forward_bf16, CUDA variant 1: the naive port, one thread per output.
//
// Idea: one thread per output element out[r, o] walks row r of inp and row o of weight
// together over the C channels, widening each bf16 and accumulating the products
// (exact in fp32: 8-bit by 8-bit significands) in fp32 from the bias, then rounds the
// sum once to nearest even.
// Why: the baseline of the bf16 ladder; plainly correct for every shape.
// Limits: as matmul_forward cuda/1: no load coalesces (neighbouring threads read
// weight rows C values apart), nothing is reused on chip but what the caches catch,
// 2*C 16-bit loads per output.
#include <cuda_bf16.h>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/matmul_naive.cuh"
#include "kernels/cuda/packed.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_forward.h"

namespace wb::variants {
namespace {

void launch(const MatmulForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  WB_LAUNCH(cuda::matmul_naive::thread_per_output<__nv_bfloat16, false>, cuda::grid_for(rows * a.OC, block), block, 0,
            cuda::stream(l), cuda::as_cuda(a.out), static_cast<__nv_bfloat16*>(nullptr), cuda::as_cuda(a.inp),
            cuda::as_cuda(a.weight), cuda::as_cuda(a.bias), rows, a.C, a.OC);
}

}  // namespace

Variant matmul_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per output: a dot product of widened bf16 rows in fp32, rounded once";
  v.params = {block_size_param()};
  v.launch_limit = cuda::matmul::thread_per_output_limit;
  return v;
}

}  // namespace wb::variants
