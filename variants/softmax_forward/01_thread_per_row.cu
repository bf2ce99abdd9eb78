// softmax_forward, CUDA variant 1: one thread per row, the naive port.
//
// Idea: thread `row` walks its row three times like the CPU loop: the maximum of
// the first V logits, the sum of exp(x - max), then probs = exp(x - max) / sum for
// the first V columns and 0 for the padding V..Vp.
// Why: the baseline the ladder starts from; plainly correct.
// Limits: neighbouring threads read addresses Vp floats apart (nothing coalesces),
// only B*T threads exist, each with a serial chain of V additions; the row is read
// three times.
#include "contract/ops/softmax_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void softmax_thread_per_row(float* probs, const float* logits, int rows, int V, int Vp) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* x = logits + size_t(row) * Vp;
  float* p = probs + size_t(row) * Vp;
  float m = -INFINITY;
  for (int i = 0; i < V; ++i) m = fmaxf(m, x[i]);
  float sum = 0.0f;
  for (int i = 0; i < V; ++i) sum += expf(x[i] - m);
  const float inv = 1.0f / sum;
  for (int i = 0; i < V; ++i) p[i] = expf(x[i] - m) * inv;
  for (int i = V; i < Vp; ++i) p[i] = 0.0f;
}

void launch(const SoftmaxForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  WB_LAUNCH(softmax_thread_per_row, cuda::grid_for(rows, block), block, 0, cuda::stream(l), a.probs, a.logits, rows,
            a.V, a.Vp);
}

}  // namespace

Variant softmax_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per row: max, sum and output passes like the CPU loop";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
