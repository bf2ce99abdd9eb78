#pragma once
// The emulator's stand-in for CUDA's cooperative_groups/reduce.h: reduce over a tile
// of a warp with plus, less or greater (or any binary function object), every thread
// of the tile getting the result. A butterfly of xor shuffles at the caller's line:
// the emulator checks each step as it checks a hand-written __shfl_xor_sync. (CUDA's
// own reduce may combine the values in another order: a float sum can differ in its
// last bits from a GPU's.)
#include "cooperative_groups.h"

namespace wb {
inline namespace emu_build {
namespace cooperative_groups {

template <class T>
struct plus {
  T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(T a, T b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(T a, T b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(T a, T b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(T a, T b) const { return a ^ b; }
};

template <unsigned N, class T, class Op>
T reduce(const thread_block_tile<N>& tile, T value, Op op, const char* file = __builtin_FILE(),
         int line = __builtin_LINE()) {
  for (unsigned offset = N / 2; offset > 0; offset /= 2) value = op(value, tile.shfl_xor(value, offset, file, line));
  return value;
}

}  // namespace cooperative_groups
}  // namespace emu_build
}  // namespace wb
