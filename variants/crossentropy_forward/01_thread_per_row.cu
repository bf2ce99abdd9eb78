// crossentropy_forward, CUDA variant 1: one thread per (b,t).
//
// Idea: thread `row` reads its target and the one probability it names, and writes
// losses[row] = -log(probs[row, target]).
// Why: the op reads one value per row out of B*T*Vp, so there is nothing to share or
// vectorise; one thread per row is already the whole design.
// Limits: the accesses to probs are scattered gathers (one 32-byte sector per row);
// at GPT-2 sizes (B*T = 8192 values) the kernel lasts a few microseconds, dominated
// by launch and memory latency rather than bandwidth.
#include "contract/ops/crossentropy_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void crossentropy_thread_per_row(float* losses, const float* probs, const int32_t* targets, int rows,
                                            int Vp) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  losses[row] = -logf(probs[size_t(row) * Vp + targets[row]]);
}

void launch(const CrossentropyForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  WB_LAUNCH(crossentropy_thread_per_row, cuda::grid_for(rows, block), block, 0, cuda::stream(l), a.losses, a.probs,
            a.targets, rows, a.Vp);
}

}  // namespace

Variant crossentropy_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per (b,t) gathers its target's probability";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
