// matmul_backward, CUDA variant 1: the naive port, one thread per output element.
//
// Idea: two plain kernels, each thread walking one dot product the way the CPU loop
// does, in float:
//   dinp[r, c]     = sum over OC of dout[r, o] * weight[o, c]   (one thread per (r, c))
//   dweight[o, c] += sum over rows of dout[r, o] * inp[r, c]    (one thread per (o, c))
// dinp is overwritten, dweight accumulated; the bias gradient is the separate op
// matmul_backward_bias. Consecutive threads take consecutive c, so the reads of weight
// and inp coalesce, and the dout operand is the same address for a whole warp (a
// broadcast). Every thread sums in a fixed order: deterministic.
// Why: the baseline the ladder starts from; plainly correct.
// Limits: no reuse through shared memory or registers: every multiply-add loads two
// floats (from L1/L2 at best), so the kernel is bound by load throughput, far below
// the FMA peak; dweight's dot products run over all B*T rows serially.
#include <cstdint>

#include "contract/ops/matmul_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

// dinp (rows, C) = dout (rows, OC) @ weight (OC, C)
__global__ void dinp_thread_per_element(float* dinp, const float* dout, const float* weight, int rows, int C, int OC) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= int64_t(rows) * C) return;
  const int64_t r = idx / C;
  const int c = int(idx % C);
  const float* g = dout + r * OC;
  float acc = 0.0f;
  for (int o = 0; o < OC; ++o) acc += g[o] * weight[int64_t(o) * C + c];
  dinp[idx] = acc;
}

// dweight (OC, C) += dout^T (OC, rows) @ inp (rows, C)
__global__ void dweight_thread_per_element(float* dweight, const float* dout, const float* inp, int rows, int C,
                                           int OC) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= int64_t(OC) * C) return;
  const int o = int(idx / C);
  const int c = int(idx % C);
  float acc = 0.0f;
  for (int64_t r = 0; r < rows; ++r) acc += dout[r * OC + o] * inp[r * C + c];
  dweight[idx] += acc;
}

void launch(const MatmulBackwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  cudaStream_t stream = cuda::stream(l);
  WB_LAUNCH(dinp_thread_per_element, cuda::grid_for(int64_t(rows) * a.C, block), block, 0, stream, a.dinp, a.dout,
            a.weight, rows, a.C, a.OC);
  WB_LAUNCH(dweight_thread_per_element, cuda::grid_for(int64_t(a.OC) * a.C, block), block, 0, stream, a.dweight, a.dout,
            a.inp, rows, a.C, a.OC);
}

}  // namespace

Variant matmul_backward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element of dinp and of dweight; plain dot products";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
