#pragma once
// The row in registers of layernorm_forward cuda/6 (a warp per row), cuda/7 (a
// cooperative-groups tile per row) and fused_residual_layernorm_forward cuda/3: a
// group of kWidth threads holds one row of `vecs` float4, thread `lane` of the group
// the float4 lane, lane + kWidth, lane + 2 kWidth, ... in its kVecs registers. What
// the group reduces (warp shuffles, cg::reduce) is the caller's: these are the passes
// each thread makes over its own registers.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "contract/variant.h"
#include "device/cuda/device_utils.cuh"
#include "variants/layernorm/layernorm.cuh"

namespace wb::cuda::layernorm_registers {

// A warp's row in registers (layernorm_forward cuda/6, fused_residual_layernorm_forward
// cuda/3): at most kMaxVecsPerLane float4 per lane, rows of up to kMaxWarpRowC channels.
constexpr int kMaxVecsPerLane = 16;
constexpr int kMaxWarpRowC = kMaxVecsPerLane * 4 * kWarpSize;  // 2048

// Loads the thread's share of row x (zeros past the row's end) and returns its sum.
template <int kWidth, int kVecs>
__device__ inline float load_row(float4 (&r)[kVecs], const float* x, int vecs, int lane) {
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int v = lane + i * kWidth;
    r[i] = v < vecs ? load4(x + 4 * v) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    sum += (r[i].x + r[i].y) + (r[i].z + r[i].w);
  }
  return sum;
}

// The thread's share of the row's squared deviations from its mean m (the second pass
// of the two-pass variance).
template <int kWidth, int kVecs>
__device__ inline float squared_deviations(const float4 (&r)[kVecs], float m, int vecs, int lane) {
  float var = 0.0f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    if (lane + i * kWidth < vecs) {
      const float dx = r[i].x - m, dy = r[i].y - m, dz = r[i].z - m, dw = r[i].w - m;
      var += (dx * dx + dy * dy) + (dz * dz + dw * dw);
    }
  }
  return var;
}

// Writes the thread's share of the normalised row y = (r - m) * s * weight + bias as
// float4 stores; kStream: streaming stores (the output is not read again soon).
template <int kWidth, bool kStream, int kVecs>
__device__ inline void store_normalised(float* y, const float4 (&r)[kVecs], float m, float s, const float* weight,
                                        const float* bias, int vecs, int lane) {
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int v = lane + i * kWidth;
    if (v < vecs) {
      const float4 normed = layernorm::normalize4(r[i], m, s, load4(weight + 4 * v), load4(bias + 4 * v));
      if constexpr (kStream) {
        store4_stream(y + 4 * v, normed);
      } else {
        store4(y + 4 * v, normed);
      }
    }
  }
}

// Calls launch_with(std::integral_constant<int, k>{}) with the first k of kCounts
// (ascending) for which k float4 a thread hold a row of C floats across kWidth threads;
// false when none does.
template <int kWidth, int... kCounts, class F>
bool with_vecs_per_thread(int C, F&& launch_with) {
  const int needed = (C / 4 + kWidth - 1) / kWidth;
  return ((needed <= kCounts ? (launch_with(std::integral_constant<int, kCounts>{}), true) : false) || ...);
}

// What a warp's row in registers needs: whole float4 (16-byte aligned rows) and at most
// max_c channels.
inline std::vector<Requirement> warp_row_requirements(int max_c) {
  return {{"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }},
          {"C <= " + std::to_string(max_c), [max_c](const Shape& s) { return s.C <= max_c; }}};
}

// A rung with a row in a warp's registers: any block size, rows of at most
// kMaxWarpRowC channels in whole float4.
template <class Args>
Variant warp_row_variant(void (*launch)(const Args&, const Launch&), std::string summary) {
  Variant v = Variant::of(launch);
  v.summary = std::move(summary);
  v.params = {block_size_param()};
  v.requirements = warp_row_requirements(kMaxWarpRowC);
  return v;
}

}  // namespace wb::cuda::layernorm_registers
