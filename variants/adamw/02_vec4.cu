// adamw, CUDA variant 2: 128-bit accesses, several vectors in flight per thread.
//
// Idea: each thread updates `vecs` float4 groups of four parameters. All loads of a
// thread (grads, params, m, v: 4 * vecs float4) are issued before any arithmetic, then
// the updates run -- the gradient scale from clipping applied in the same pass as
// everything else -- and the results leave as float4 stores. Block b covers the
// block_size * vecs consecutive float4 starting at b * block_size * vecs, thread t the
// ones at t, t + block_size, ... within it, so every load instruction of a warp reads
// 512 contiguous bytes. The last N % 4 parameters (at most three) are updated one by
// one by the first threads of block 0.
// Why it should beat variant 1: a quarter of the memory instructions, and up to
// 4 * vecs independent 128-bit loads in flight per thread, which is what a purely
// bandwidth-bound op needs to approach copy bandwidth (its traffic is 7 streams:
// grads, params, m, v read; params, m, v written). Loads of grads are streaming
// (read once); params, m and v use the default policy (read, then written back).
// Limits: the tensors must start on a 16-byte boundary (cudaMalloc's are; checked
// before the launch). More registers per thread as vecs grows.
#include <cstdint>
#include <stdexcept>

#include "contract/ops/adamw.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/adamw/adamw.cuh"

namespace wb::variants {
namespace {

using cuda::adamw::Step;
using cuda::adamw::StepInputs;
using cuda::adamw::update;

__device__ inline void update4(float4& p, float4& m, float4& v, const float4& g, const Step& s) {
  update(p.x, m.x, v.x, g.x, s);
  update(p.y, m.y, v.y, g.y, s);
  update(p.z, m.z, v.z, g.z, s);
  update(p.w, m.w, v.w, g.w, s);
}

// kMaxThreads >= blockDim.x caps the registers (65536 per SM): kVecs = 4 wants ~108,
// which 1024 threads could not launch with.
template <int kVecs, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads)
    adamw_vec4(float* params, float* m, float* v, const float* grads, int64_t n, StepInputs in) {
  const Step s = cuda::adamw::step_at(in);
  const int64_t vecs = n / 4;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x * kVecs + threadIdx.x;
  float4 g[kVecs], p[kVecs], mv[kVecs], vv[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = first + int64_t(k) * blockDim.x;
    if (i < vecs) {
      g[k] = cuda::load4_stream(grads + 4 * i);
      p[k] = cuda::load4(params + 4 * i);
      mv[k] = cuda::load4(m + 4 * i);
      vv[k] = cuda::load4(v + 4 * i);
    }
  }
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = first + int64_t(k) * blockDim.x;
    if (i < vecs) {
      update4(p[k], mv[k], vv[k], g[k], s);
      cuda::store4(params + 4 * i, p[k]);
      cuda::store4(m + 4 * i, mv[k]);
      cuda::store4(v + 4 * i, vv[k]);
    }
  }
  const int64_t tail = n - 4 * vecs;  // 0..3
  if (blockIdx.x == 0 && threadIdx.x < tail) {
    const int64_t i = 4 * vecs + threadIdx.x;
    float pi = params[i], mi = m[i], vi = v[i];
    update(pi, mi, vi, grads[i], s);
    params[i] = pi;
    m[i] = mi;
    v[i] = vi;
  }
}

template <int kVecs>
void launch_with(const AdamwArgs& a, const Launch& l) {
  const int block = l.block_size();
  const int64_t vecs = a.N / 4;
  const unsigned grid = vecs > 0 ? cuda::grid_for(vecs, int64_t(block) * kVecs) : 1u;
  const cudaStream_t s = cuda::stream(l);
  const StepInputs in = cuda::adamw::inputs_of(a);
  if (block <= 512)
    WB_LAUNCH(adamw_vec4<kVecs, 512>, grid, block, 0, s, a.params, a.m, a.v, a.grads, a.N, in);
  else
    WB_LAUNCH(adamw_vec4<kVecs, 1024>, grid, block, 0, s, a.params, a.m, a.v, a.grads, a.N, in);
}

void launch(const AdamwArgs& a, const Launch& l) {
  cuda::require_aligned16("adamw cuda/2", {a.params, a.m, a.v, a.grads});
  switch (l.get("vecs")) {
    case 1:
      return launch_with<1>(a, l);
    case 2:
      return launch_with<2>(a, l);
    case 4:
      return launch_with<4>(a, l);
  }
  throw std::logic_error("adamw cuda/2: vecs must be 1, 2 or 4");
}

}  // namespace

Variant adamw_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "float4 accesses, `vecs` float4 per thread loaded before any update, the clipping scale in the same pass";
  v.params = {block_size_param(), TuningParam{"vecs", {1, 2, 4}, 2}};
  return v;
}

}  // namespace wb::variants
