// crossentropy_softmax_backward, CUDA variant 2: one block per row, 128-bit accesses.
//
// Idea: block r owns row r: its target and dloss are read once into registers, and
// the threads stride over the row's first V columns four at a time (float4 loads of
// probs and dlogits, one float4 store). The last V % 4 real columns (at most three)
// are done one by one by the first threads; the padding is never touched.
// Why it should beat variant 1: no per-element division or reload of the row's
// scalars, a quarter of the memory instructions, and rows that start on 16-byte
// boundaries so every vector is aligned. probs is read once: streaming loads.
// Limits: Vp % 4 == 0 (each row 16-byte aligned). A block per row means B*T blocks;
// with a small V most threads of a large block idle.
#include <cstdint>
#include <stdexcept>

#include "contract/ops/crossentropy_softmax_backward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void crossentropy_backward_row_vec4(float* dlogits, const float* dlosses, const float* probs,
                                               const int32_t* targets, int V, int Vp) {
  const int64_t row = blockIdx.x;
  const float* p = probs + row * Vp;
  float* d = dlogits + row * Vp;
  const int target = targets[row];
  const float dloss = dlosses[row];
  const int vecs = V / 4;
  for (int v = threadIdx.x; v < vecs; v += blockDim.x) {
    const int c = 4 * v;
    const float4 pv = cuda::load4_stream(p + c);
    float4 dv = cuda::load4(d + c);
    dv.x += (pv.x - (c == target ? 1.0f : 0.0f)) * dloss;
    dv.y += (pv.y - (c + 1 == target ? 1.0f : 0.0f)) * dloss;
    dv.z += (pv.z - (c + 2 == target ? 1.0f : 0.0f)) * dloss;
    dv.w += (pv.w - (c + 3 == target ? 1.0f : 0.0f)) * dloss;
    cuda::store4(d + c, dv);
  }
  const int c = 4 * vecs + int(threadIdx.x);  // the V % 4 real columns left
  if (c < V) d[c] += (p[c] - (c == target ? 1.0f : 0.0f)) * dloss;
}

void launch(const CrossentropySoftmaxBackwardArgs& a, const Launch& l) {
  cuda::require_aligned16("crossentropy_softmax_backward cuda/2", {a.dlogits, a.probs});
  const int64_t rows = int64_t(a.B) * a.T;
  WB_LAUNCH(crossentropy_backward_row_vec4, cuda::grid_for(rows, 1), l.block_size(), 0, cuda::stream(l), a.dlogits,
            a.dlosses, a.probs, a.targets, a.V, a.Vp);
}

}  // namespace

Variant crossentropy_softmax_backward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "one block per row, target and dloss read once, float4 loads and stores over the first V columns";
  v.params = {block_size_param()};
  v.requirements = {{"Vp % 4 == 0", [](const Shape& s) { return s.Vp % 4 == 0; }}};
  return v;
}

}  // namespace wb::variants
