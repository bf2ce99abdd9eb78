// adamw, CUDA variant 1: the naive port, one thread per parameter.
//
// Idea: thread i scales its gradient by the clipping scale of the norm, updates m[i] and v[i], and then
// params[i] with the bias-corrected moments and decoupled weight decay, in float. The
// step's values (norm, learning rate, t) are read from device memory by every thread.
// Why: the baseline of the ladder; every access already coalesces.
// Limits: 32-bit accesses to four arrays (seven memory instructions per element) and
// a single element per thread.
#include "contract/ops/adamw.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/adamw/adamw.cuh"

namespace wb::variants {
namespace {

using cuda::adamw::Step;
using cuda::adamw::StepInputs;

__global__ void adamw_naive(float* params, float* m, float* v, const float* grads, int64_t n,
                            StepInputs in) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Step s = cuda::adamw::step_at(in);
  float p = params[i], mi = m[i], vi = v[i];
  cuda::adamw::update(p, mi, vi, grads[i], s);
  params[i] = p;
  m[i] = mi;
  v[i] = vi;
}

void launch(const AdamwArgs& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(adamw_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), a.params, a.m, a.v, a.grads, a.N,
            cuda::adamw::inputs_of(a));
}

}  // namespace

Variant adamw_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per parameter: scale the gradient, update m, v and the parameter";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
