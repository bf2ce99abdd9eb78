// adamw_bf16, CUDA variant 1: the naive port, one thread per parameter.
//
// Idea: thread i widens its bf16 gradient, updates its fp32 master weight and moments
// as adamw's variants update params, m and v (variants/adamw/adamw.cuh), and writes the
// bf16 parameter rounded from the new master weight: stochastically, from the hash of
// (i, seed), or to nearest even.
// Why: the baseline of the bf16 ladder; every access already coalesces.
// Limits: scalar accesses to five arrays (eight memory instructions per element).
#include <cuda_bf16.h>

#include <cstdint>

#include "contract/ops/adamw.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/adamw/adamw_master.cuh"

namespace wb::variants {
namespace {

using cuda::adamw::Step;
using cuda::adamw::StepInputs;

__global__ void adamw_bf16_naive(__nv_bfloat16* params, float* master, float* m, float* v, const __nv_bfloat16* grads,
                                 int64_t n, StepInputs in, int stochastic) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Step s = cuda::adamw::step_at(in);
  const float p = cuda::adamw::update_master(master, m, v, grads[i], i, s);
  params[i] = cuda::adamw::round_param(p, i, s.seed, stochastic);
}

void launch(const AdamwBf16Args& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(adamw_bf16_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), cuda::as_cuda(a.params), a.master,
            a.m, a.v, cuda::as_cuda(a.grads), a.N, cuda::adamw::inputs_of(a), a.stochastic);
}

}  // namespace

Variant adamw_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per parameter: the fp32 master, m and v updated, the bf16 parameter rounded from the master";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
