// layernorm_forward, CUDA variant 6: the row in registers, 128-bit loads and stores.
//
// Idea: one warp per row; each lane loads its share of the row once, as float4
// (128-bit) loads, into registers. Mean and variance are then computed exactly in two
// passes over those registers, and the output leaves as float4 stores.
// Why it should beat variants 3 and 4: every element is read from memory once and
// written once -- the least traffic the op allows -- with a quarter of the load and
// store instructions, and the two-pass statistics stay as robust as variant 3's.
// Limits: C % 4 == 0 (each row 16-byte aligned) and C <= 2048 (at most 16 float4 per
// lane; the kernel is instantiated for 1, 2, 4, 8 and 16). More registers per thread
// than variant 3, so fewer resident warps for large C.
#include <stdexcept>
#include <string>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/layernorm.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/layernorm_forward.h"

namespace wb::variants {
namespace {

constexpr int kMaxVecsPerLane = 16;
constexpr int kMaxC = kMaxVecsPerLane * 4 * cuda::kWarpSize;  // 2048

template <int kVecs>  // float4 registers per lane; C/4 <= 32 * kVecs
__global__ void layernorm_vec4_registers(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                         const float* bias, int rows, int C) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int row = blockIdx.x * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= rows) return;
  const int vecs = C / 4;
  const float* x = inp + size_t(row) * C;

  float4 r[kVecs];
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int v = lane + i * cuda::kWarpSize;
    r[i] = v < vecs ? cuda::load4(x + 4 * v) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    sum += (r[i].x + r[i].y) + (r[i].z + r[i].w);
  }
  const float m = cuda::warp_sum(sum) / C;

  float var = 0.0f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    if (lane + i * cuda::kWarpSize < vecs) {
      const float dx = r[i].x - m, dy = r[i].y - m, dz = r[i].z - m, dw = r[i].w - m;
      var += (dx * dx + dy * dy) + (dz * dz + dw * dw);
    }
  }
  const float s = rsqrtf(cuda::warp_sum(var) / C + kLayernormEps);

  float* y = out + size_t(row) * C;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int v = lane + i * cuda::kWarpSize;
    if (v < vecs) {
      cuda::store4(y + 4 * v, cuda::layernorm::normalize4(r[i], m, s, cuda::load4(weight + 4 * v),
                                                        cuda::load4(bias + 4 * v)));
    }
  }
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

template <int kVecs>
void launch_with(const LayernormForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const int rows_per_block = block / cuda::kWarpSize;
  WB_LAUNCH(layernorm_vec4_registers<kVecs>, cuda::grid_for(rows, rows_per_block), block, 0, cuda::stream(l), a.out,
            a.mean, a.rstd, a.inp, a.weight, a.bias, rows, a.C);
}

void launch(const LayernormForwardArgs& a, const Launch& l) {
  cuda::require_aligned16("layernorm_forward cuda/6", {a.out, a.inp, a.weight, a.bias});
  const int per_lane = (a.C / 4 + cuda::kWarpSize - 1) / cuda::kWarpSize;  // float4 per lane
  if (per_lane <= 1) return launch_with<1>(a, l);
  if (per_lane <= 2) return launch_with<2>(a, l);
  if (per_lane <= 4) return launch_with<4>(a, l);
  if (per_lane <= 8) return launch_with<8>(a, l);
  if (per_lane <= kMaxVecsPerLane) return launch_with<kMaxVecsPerLane>(a, l);
  throw Unsupported("layernorm_forward cuda/6 needs C <= " + std::to_string(kMaxC));
}

}  // namespace

Variant layernorm_forward_cuda_6() {
  Variant v = Variant::of(&launch);
  v.summary = "warp per row, the row read once into registers with float4 loads, float4 stores";
  v.params = {block_size_param()};
  v.requirements = {{"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }},
                    {"C <= " + std::to_string(kMaxC), [](const Shape& s) { return s.C <= kMaxC; }}};
  return v;
}

}  // namespace wb::variants
