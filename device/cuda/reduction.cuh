#pragma once
// How many blocks a grid-stride reduction over a whole tensor launches (global_norm's
// variants, fp32 and bf16).
#include <cstdint>

#include "device/cuda/runtime.h"

namespace wb::cuda {

// About as many threads as a large GPU keeps resident (132 SMs x 2048 on an H100):
// enough to saturate memory, few enough that every thread sums hundreds of values
// before any cross-thread step. A constant rather than a device query, so that the
// number of partial sums -- and the workspace and summation order of the
// deterministic variant -- depend on the shape and block size alone.
constexpr int64_t kTargetThreads = int64_t(1) << 18;

// Blocks for `items` units of work (elements, float4 or packs of 8 bf16) at
// block_size threads each.
inline unsigned reduction_blocks(int64_t items, int block_size) {
  const int64_t cap = kTargetThreads / block_size;
  const int64_t needed = (items + block_size - 1) / block_size;
  return static_cast<unsigned>(needed < 1 ? 1 : (needed < cap ? needed : cap));
}

}  // namespace wb::cuda
