#pragma once
// The emulator's stand-in for CUDA's cooperative groups: the part a kernel written for
// a GPU uses to reduce within a warp or a tile of one (thread_block, tiled_partition
// of 32 lanes or fewer, sync, the shuffles and votes, thread_rank, meta_group_rank and
// meta_group_size; cooperative_groups/reduce.h adds reduce with plus, less and
// greater). Each call maps onto the emulator's barrier and warp collectives with the
// tile's lanes as the mask, so a tile gets every check a hand-written __shfl_sync
// gets; the call site named in messages is the caller's line (__builtin_LINE).
//
// Defined in wb::emu_build (emu/shim.h says why) and reached through the
// usual name, cooperative_groups.
#include <cstdint>

#include "emu/shim.h"

namespace wb {
inline namespace emu_build {
namespace cooperative_groups {

namespace detail {

inline ::wb::emu::Site site(const char* file, int line) { return ::wb::emu::Site{file, line}; }

inline unsigned block_threads() {
  const ::wb::emu::Dim3 d = ::wb::emu::builtins().block_dim;
  return d.x * d.y * d.z;
}

inline unsigned block_rank() {
  const ::wb::emu::Builtins& b = ::wb::emu::builtins();
  return (b.thread_idx.z * b.block_dim.y + b.thread_idx.y) * b.block_dim.x + b.thread_idx.x;
}

}  // namespace detail

class thread_block {
 public:
  static void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    ::wb::emu::syncthreads(detail::site(file, line));
  }
  static unsigned thread_rank() { return detail::block_rank(); }
  static unsigned long long num_threads() { return detail::block_threads(); }
  static unsigned size() { return detail::block_threads(); }
  static dim3 group_index() { return ::wb::emu::builtins().block_idx; }
  static dim3 thread_index() { return ::wb::emu::builtins().thread_idx; }
  static dim3 dim_threads() { return ::wb::emu::builtins().block_dim; }
  static dim3 group_dim() { return ::wb::emu::builtins().block_dim; }
};

inline thread_block this_thread_block() { return {}; }

// A tile of N consecutive threads of the block (N a power of two up to 32): the lanes
// of one warp, or an aligned part of them.
template <unsigned N>
class thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tiles of 1, 2, 4, 8, 16 or 32 threads");

 public:
  static constexpr unsigned num_threads() { return N; }
  static constexpr unsigned size() { return N; }
  static unsigned thread_rank() { return detail::block_rank() % N; }
  static unsigned meta_group_rank() { return detail::block_rank() / N; }
  static unsigned meta_group_size() { return (detail::block_threads() + N - 1) / N; }

  void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    ::wb::emu::syncwarp(detail::site(file, line), mask());
  }
  template <class T>
  T shfl(T value, int source, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return ::wb::emu::ShuffleAt<::wb::emu::Exchange::index>{detail::site(file, line)}(mask(), value, source, N);
  }
  template <class T>
  T shfl_down(T value, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return ::wb::emu::ShuffleAt<::wb::emu::Exchange::down>{detail::site(file, line)}(mask(), value, int(delta), N);
  }
  template <class T>
  T shfl_up(T value, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return ::wb::emu::ShuffleAt<::wb::emu::Exchange::up>{detail::site(file, line)}(mask(), value, int(delta), N);
  }
  template <class T>
  T shfl_xor(T value, unsigned lane_mask, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return ::wb::emu::ShuffleAt<::wb::emu::Exchange::bxor>{detail::site(file, line)}(mask(), value, int(lane_mask),
                                                                                       N);
  }
  unsigned ballot(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    // Bit i for the tile's thread i, as CUDA's tile ballot.
    return ::wb::emu::ballot(detail::site(file, line), mask(), predicate != 0) >> first_lane();
  }
  int any(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return ballot(predicate, file, line) != 0;
  }
  int all(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return ballot(predicate, file, line) == (mask() >> first_lane());
  }

 private:
  // The tile's lanes within the warp, those the block has.
  static unsigned first_lane() { return (detail::block_rank() % 32) / N * N; }
  static unsigned mask() {
    const unsigned tile = (N == 32 ? ~0u : (1u << N) - 1) << first_lane();
    const unsigned warp_start = detail::block_rank() / 32 * 32;
    const unsigned lanes = detail::block_threads() - warp_start;
    const unsigned exists = lanes >= 32 ? ~0u : (1u << lanes) - 1;
    return tile & exists;
  }
};

template <unsigned N, class Parent>
thread_block_tile<N> tiled_partition(const Parent&) {
  return {};
}

}  // namespace cooperative_groups
}  // namespace emu_build
}  // namespace wb

namespace cooperative_groups = ::wb::emu_build::cooperative_groups;
