// crossentropy_softmax_backward, CUDA variant 1: one thread per element.
//
// Idea: thread i of the B*T*V real logits finds its row and column (i / V, i % V) and
// adds (probs - [column == target]) * dlosses[row] to its dlogit. The padded columns
// V..Vp are never touched.
// Why: the baseline of the ladder: every access coalesces within a row, and nothing
// is shared between threads.
// Limits: a 64-bit division per element, dlosses and targets reloaded by every thread
// of a row (cached, but instructions all the same), 32-bit accesses, and rows of V
// columns that do not start on a multiple of the warp, so warps straddle rows.
#include <cstdint>

#include "contract/ops/crossentropy_softmax_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void crossentropy_backward_per_element(float* dlogits, const float* dlosses, const float* probs,
                                                  const int32_t* targets, int64_t n, int V, int Vp) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t row = i / V;
  const int col = int(i - row * V);
  const int64_t at = row * Vp + col;
  const float indicator = col == targets[row] ? 1.0f : 0.0f;
  dlogits[at] += (probs[at] - indicator) * dlosses[row];
}

void launch(const CrossentropySoftmaxBackwardArgs& a, const Launch& l) {
  const int64_t n = int64_t(a.B) * a.T * a.V;
  const int block = l.block_size();
  WB_LAUNCH(crossentropy_backward_per_element, cuda::grid_for(n, block), block, 0, cuda::stream(l), a.dlogits,
            a.dlosses, a.probs, a.targets, n, a.V, a.Vp);
}

}  // namespace

Variant crossentropy_softmax_backward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per real logit (B*T*V threads), padding untouched";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
