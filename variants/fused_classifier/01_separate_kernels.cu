// fused_classifier, CUDA variant 1: softmax statistics, loss and dlogits as three
// separate kernels.
//
// Idea: the unfused pipeline. Kernel 1 (one block per row) computes the row's
// maximum and the sum of exp(x - max) over the first V logits, in two passes, and
// keeps them in the workspace. Kernel 2 (one thread per row) writes the loss,
// max + log(sum) - logits[target], before anything is overwritten. Kernel 3 (one
// thread per element of B*T*Vp) turns every logit into its gradient,
// (exp(x - max) / sum - [i == target]) * dloss, and the padding V..Vp into 0.
// Why: the baseline the fused variants are measured against; each kernel is simple
// and coalesced, and stream order makes kernel 2 read the target's logit before
// kernel 3 overwrites it.
// Limits: three launches, the row is read three times (twice by kernel 1, once by
// kernel 3, all from DRAM at GPT-2 sizes); the statistics round-trip through global
// memory; kernel 3 needs a 64-bit division per element. Workspace: 2 floats per row.
#include <stdexcept>

#include "contract/ops/fused_classifier.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

// stats[2*row] = max, stats[2*row + 1] = sum of exp(x - max), over the first V columns.
__global__ void row_statistics(float* stats, const float* logits, int V, int Vp) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const float* x = logits + size_t(blockIdx.x) * Vp;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < V; i += blockDim.x) m = fmaxf(m, x[i]);
  m = cuda::block_max(m, scratch);
  float sum = 0.0f;
  for (int i = threadIdx.x; i < V; i += blockDim.x) sum += expf(x[i] - m);
  sum = cuda::block_sum(sum, scratch);
  if (threadIdx.x == 0) {
    stats[2 * size_t(blockIdx.x)] = m;
    stats[2 * size_t(blockIdx.x) + 1] = sum;
  }
}

__global__ void row_loss(float* losses, const float* stats, const float* logits, const int32_t* targets, int rows,
                         int Vp) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float m = stats[2 * size_t(row)];
  const float sum = stats[2 * size_t(row) + 1];
  losses[row] = m + logf(sum) - logits[size_t(row) * Vp + targets[row]];
}

__global__ void element_dlogits(float* logits, const float* stats, const int32_t* targets, float dloss, int64_t n,
                                int V, int Vp) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t row = i / Vp;
  const int col = int(i - row * Vp);
  if (col >= V) {
    logits[i] = 0.0f;
    return;
  }
  const float p = expf(logits[i] - stats[2 * row]) / stats[2 * row + 1];
  logits[i] = (p - (col == targets[row] ? 1.0f : 0.0f)) * dloss;
}

void launch(const FusedClassifierArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  if (l.workspace_bytes < 2 * size_t(rows) * sizeof(float) || !l.workspace)
    throw std::logic_error("fused_classifier cuda/1 needs a workspace of 2 floats per row");
  float* stats = static_cast<float*>(l.workspace);
  const int block = l.block_size();
  const cudaStream_t s = cuda::stream(l);
  WB_LAUNCH(row_statistics, rows, block, 0, s, stats, a.logits, a.V, a.Vp);
  WB_LAUNCH(row_loss, cuda::grid_for(rows, block), block, 0, s, a.losses, stats, a.logits, a.targets, rows, a.Vp);
  const int64_t n = int64_t(rows) * a.Vp;
  WB_LAUNCH(element_dlogits, cuda::grid_for(n, block), block, 0, s, a.logits, stats, a.targets, a.dloss, n, a.V, a.Vp);
}

}  // namespace

Variant fused_classifier_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "three kernels: row max and sum (block per row), loss (thread per row), dlogits (thread per element)";
  v.params = {block_size_param()};
  v.workspace = [](const Shape& s, const ParamValues&) { return 2 * size_t(s.B * s.T) * sizeof(float); };
  return v;
}

}  // namespace wb::variants
