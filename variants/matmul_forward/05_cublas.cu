// matmul_forward, CUDA variant 5: cuBLAS SGEMM, then a bias kernel.
//
// Idea: hand the product to the vendor library in plain fp32 and add the bias in a
// second, memory-bound kernel. The SGEMM is variants/matmul/matmul.cuh's sgemm_fp32
// (which says how the row-major product maps onto column-major cuBLAS, and keeps it
// off the TF32 tensor cores: this is the fp32 class).
// With a null bias the second kernel is not launched. block_size is that of the bias
// kernel (float4 per thread when OC % 4 == 0 and the pointers are 16-byte aligned).
// Why it should beat variants 1-4: cuBLAS picks a kernel tuned for the device and the
// shape (tiles, pipelining, split-K), the reference for the hand-written fp32 ladder.
// Limits: the bias costs one more read and write of out; any shape runs.
#include "contract/ops/matmul_forward.h"
#include "variants/matmul/matmul.cuh"

namespace wb::variants {
namespace {

namespace mf = cuda::matmul;

void launch(const MatmulForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  mf::sgemm_fp32(l, a.out, a.inp, a.weight, rows, a.C, a.OC);
  if (a.bias) mf::add_bias(a.out, a.bias, rows, a.OC, l.block_size(), cuda::stream(l));
}

}  // namespace

Variant matmul_forward_cuda_5() {
  Variant v = Variant::of(&launch);
  v.summary = "cuBLAS SGEMM in plain fp32 (default math mode, no TF32), then a bias kernel (block_size is its)";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
