#pragma once
// The emulator's model of the tensor-core instructions of device/cuda/tensor_core_ptx.cuh
// (which documents each function and the PTX fragment layouts; this file has the same
// signatures plus the call site, taken by default arguments), run lane by lane on the
// emulator (emu/emu.h).
//
// What it proves about tensor-core code:
//   - the fragments: mma_m16n8k16_bf16 computes every lane's D from the A and B
//     registers of the lanes that hold them under the PTX ISA's layout, so a fragment
//     packed with a row and a column swapped, a register out of place or the wrong half
//     of a register gives a wrong product, as on a GPU;
//   - ldmatrix: each lane receives exactly the elements the PTX ISA gives it, from the
//     row addresses of lanes 8j..8j+7; a row address that is not 16-byte aligned or
//     whose 16 bytes are not inside the block's shared memory is a fault naming the
//     lane and the call;
//   - cp.async: the destination holds poison (0xFF: NaN in bf16 and fp32) from the
//     issue until the issuing thread's wait covers the copy's group, so a stage read
//     before its wait reads NaNs; the landing is a write by the issuing thread at the
//     wait (the ThreadSanitizer build reports a reader that no barrier orders after
//     it); misaligned, non-shared, mis-sized (.cg with 4 or 8 bytes) or mis-bounded
//     (src_bytes outside 0..Bytes) copies, and a thread that exits with copies not
//     waited for, are faults naming the call and the thread;
//   - warp-collective use: all 32 lanes must take part in mma and ldmatrix (a lane
//     missing, exited or waiting elsewhere is a synccheck fault naming it).
// What it cannot tell: speed (the counters, emu/emu.h, count ldmatrix's rows and
// cp.async's copies as the hardware's requests, not the model's own accesses); how the
// copies overlap with the computation; and the
// tensor cores' numerics below fp32: the emulator adds C and then the products for
// k = 0..15 in turn, each product (exact in fp32: 8-bit by 8-bit significands) and each
// sum rounded to fp32. The hardware's order and internal precision of the sum are not
// specified by PTX, so results may differ from a GPU's in the last bits of fp32; a
// check must allow for that (the fp32 summation tolerance over K does).
//
// Memory: ldmatrix's reads of shared memory and cp.async's read of its source, its
// poison and its landing are ordinary accesses of the calling thread, compiled with the
// kernel, so the plain build's interleaving pass and the ThreadSanitizer build see them
// as that thread's (reads and writes at the call's line). ldmatrix: on a GPU the lanes'
// addresses go to the shared-memory unit and the data comes back distributed; here each
// lane reads the very elements it receives (as wmma::load_matrix_sync does), so a race
// is attributed to the lane that consumes the data, and a lane's 16-byte row is checked
// by the lane that gave it. cp.async's source is read at issue (a snapshot): PTX lets
// the copy read it any time before the wait, and a kernel may not write the source
// meanwhile; reading at issue puts an out-of-bounds source at the call that names it.
//
// Defined in wb::emu_build (emu/shim.h says why): variants reach them as
// cuda::tc from inside namespace wb.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "emu/include/cuda_bf16.h"
#include "emu/shim.h"
#include "emu/tensor_core_state.h"

namespace wb {
inline namespace emu_build {
namespace cuda::tc {

// Two bf16 packed into one 32-bit register, `lo` in the low half.
inline uint32_t pack_bf16x2(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return uint32_t(__bfloat16_as_ushort(lo)) | (uint32_t(__bfloat16_as_ushort(hi)) << 16);
}

namespace detail {

inline ::wb::emu::Site site(const char* file, int line) { return ::wb::emu::Site{file, line}; }

// The calling thread's lane: its linear index in the block, mod 32.
inline int lane_of_thread() {
  const ::wb::emu::Builtins& b = ::wb::emu::builtins();
  return int((b.thread_idx.z * b.block_dim.y + b.thread_idx.y) * b.block_dim.x + b.thread_idx.x) % 32;
}

inline float bf16_bits_to_float(uint32_t bits16) {
  const uint32_t u = bits16 << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline std::string hex(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

// What a lane hands the others at mma: a copy of its A and B registers.
struct MmaOperands {
  uint32_t a[4];
  uint32_t b[2];
};

// Element (row, k) of A and (k, col) of B, read from the registers of the lane that holds
// it (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"): A's
// a[i] of lane 4 (row % 8) + (k % 8) / 2 with i = (row >= 8) + 2 (k >= 8); B's b[i] of
// lane 4 col + (k % 8) / 2 with i = (k >= 8); the low half holds the even k. Not
// instrumented, as mma_lane (which calls them) is not: a sanitized build does not inline
// an instrumented function into one that is not, and would report them.
__attribute__((no_sanitize("thread"))) inline float a_element(const uint64_t* lanes, int row, int k) {
  const auto* o = reinterpret_cast<const MmaOperands*>(uintptr_t(lanes[4 * (row % 8) + (k % 8) / 2]));
  return bf16_bits_to_float((o->a[(row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)] >> (16 * (k & 1))) & 0xffffu);
}
__attribute__((no_sanitize("thread"))) inline float b_element(const uint64_t* lanes, int k, int col) {
  const auto* o = reinterpret_cast<const MmaOperands*>(uintptr_t(lanes[4 * col + (k % 8) / 2]));
  return bf16_bits_to_float((o->b[k >= 8 ? 1 : 0] >> (16 * (k & 1))) & 0xffffu);
}

// This lane's four elements of D = A * B + C: rows g and g + 8, columns 2t and 2t + 1.
// The other lanes' registers are the emulator's exchange, not memory the kernel
// shares: not reported to the scheduler or ThreadSanitizer.
__attribute__((no_sanitize("thread"))) inline void mma_lane(float* out, const float* c, const uint64_t* lanes, int lane) {
  const int g = lane >> 2, t = lane & 3;
  // The lane's two rows of A and two columns of B, each element read once (not once per
  // product); each sum is formed in k order.
  float a[2][16], b[2][16];
  for (int k = 0; k < 16; ++k) {
    a[0][k] = a_element(lanes, g, k);
    a[1][k] = a_element(lanes, g + 8, k);
    b[0][k] = b_element(lanes, k, 2 * t);
    b[1][k] = b_element(lanes, k, 2 * t + 1);
  }
  for (int i = 0; i < 4; ++i) {
    const float* row = a[i >> 1];
    const float* col = b[i & 1];
    float sum = c[i];
    for (int k = 0; k < 16; ++k) sum = sum + row[k] * col[k];
    out[i] = sum;
  }
}

// ldmatrix: the calling lane's own row address, if it gives one (lanes 0..8 count - 1),
// must be 16-byte aligned and its 16 bytes inside the block's shared memory.
inline void check_row(const void* row, int count, const char* what, ::wb::emu::Site at) {
  const int lane = lane_of_thread();
  if (lane >= 8 * count) return;  // its address is not read
  // Written only for a fault: every ldmatrix of every lane passes here, and the words
  // (describe_address looks the address up under the context's lock) cost more than
  // the instruction's emulation.
  const auto which = [&] {
    return std::string(what) + ": lane " + std::to_string(lane) + "'s row address " +
           ::wb::emu::describe_address(row) + " (row " + std::to_string(lane % 8) + " of matrix " +
           std::to_string(lane / 8) + ")";
  };
  if (reinterpret_cast<std::uintptr_t>(row) % 16 != 0)
    ::wb::emu::fault_at(at, ::wb::emu::kMisalignedAddress, "memcheck", which() + " is not 16-byte aligned");
  if (!::wb::emu::in_shared_memory(row, 16))
    ::wb::emu::fault_at(at, ::wb::emu::kIllegalAddress, "memcheck",
                        which() + ": its 16 bytes do not lie inside the block's shared memory");
}

// ldmatrix: lane l gets in r[j], from matrix j, row l / 4, columns 2 (l % 4) and
// 2 (l % 4) + 1 (one 4-byte read of the row lane 8j + l / 4 gave); transposed, column
// l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1 (two 2-byte reads, of the rows lanes
// 8j + 2 (l % 4) and 8j + 2 (l % 4) + 1 gave). The reads are this lane's own accesses.
template <int kCount, bool kTrans>
inline void ldmatrix(uint32_t (&r)[kCount], const void* row, const char* what, const char* file, int line) {
  const ::wb::emu::Site at = site(file, line);
  check_row(row, kCount, what, at);
  const int lane = lane_of_thread();
  // Counted as the hardware reads it: one request of 16-byte rows, 8 rows a phase.
  ::wb::emu::count_instruction(at, row, 16, true, false, lane < 8 * kCount);
  const ::wb::emu::UncountedScope model;
  uint64_t rows[32];
  ::wb::emu::warp_matrix(at, what, reinterpret_cast<std::uintptr_t>(row), rows, false);
  for (int j = 0; j < kCount; ++j) {
    if (!kTrans) {
      const auto* p = reinterpret_cast<const unsigned char*>(uintptr_t(rows[8 * j + lane / 4])) + 4 * (lane % 4);
      uint32_t v;
      std::memcpy(&v, p, sizeof v);
      r[j] = v;
    } else {
      const auto* lo = reinterpret_cast<const uint16_t*>(uintptr_t(rows[8 * j + 2 * (lane % 4)])) + lane / 4;
      const auto* hi = reinterpret_cast<const uint16_t*>(uintptr_t(rows[8 * j + 2 * (lane % 4) + 1])) + lane / 4;
      r[j] = uint32_t(*lo) | (uint32_t(*hi) << 16);
    }
  }
}

// The instrumented writes of cp.async (the poison at issue, the data at the wait): one
// access of the copy's size, as the hardware's is.
inline void write_bytes(void* dst, const unsigned char* data, std::size_t bytes) {
  switch (bytes) {
    case 4: {
      uint32_t v;
      std::memcpy(&v, data, 4);
      *static_cast<uint32_t*>(dst) = v;
      break;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, data, 8);
      *static_cast<uint64_t*>(dst) = v;
      break;
    }
    default: {
      uint64_t v[2];
      std::memcpy(v, data, 16);
      static_cast<uint64_t*>(dst)[0] = v[0];
      static_cast<uint64_t*>(dst)[1] = v[1];
    }
  }
}

template <int Bytes>
inline void cp_async(const char* what, void* dst, const void* src, int src_bytes, ::wb::emu::Site at) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  // Written only for a fault, as check_row's words are.
  const auto name = [what] { return std::string(what) + "<" + std::to_string(Bytes) + ">"; };
  if (src_bytes < 0 || src_bytes > Bytes)
    ::wb::emu::fault_at(at, ::wb::emu::kLaunchFailure, "cp.async",
                        name() + ": src_bytes " + std::to_string(src_bytes) + " is outside 0.." + std::to_string(Bytes));
  if (reinterpret_cast<std::uintptr_t>(dst) % Bytes != 0 || reinterpret_cast<std::uintptr_t>(src) % Bytes != 0)
    ::wb::emu::fault_at(at, ::wb::emu::kMisalignedAddress, "memcheck",
                        name() + ": the " + (reinterpret_cast<std::uintptr_t>(dst) % Bytes ? "destination " : "source ") +
                            hex(reinterpret_cast<std::uintptr_t>(dst) % Bytes ? dst : src) + " is not " +
                            std::to_string(Bytes) + "-byte aligned");
  if (!::wb::emu::in_shared_memory(dst, Bytes))
    ::wb::emu::fault_at(at, ::wb::emu::kIllegalAddress, "memcheck",
                        name() + ": the destination " + ::wb::emu::describe_address(dst) +
                            " does not lie inside the block's shared memory");
  if (src_bytes > 0 && !::wb::emu::in_device_memory(src, std::size_t(src_bytes)))
    ::wb::emu::fault_at(at, ::wb::emu::kIllegalAddress, "memcheck",
                        name() + ": the source " + hex(src) + " (" + std::to_string(src_bytes) +
                            " bytes) does not lie inside a device buffer (global memory)");
  // Counted as the hardware copies: a global read of the source (none for a zero fill),
  // a shared write of the destination.
  if (src_bytes > 0) ::wb::emu::count_instruction(at, src, Bytes, false, false);
  ::wb::emu::count_instruction(at, dst, Bytes, true, true);
  const ::wb::emu::UncountedScope model;
  // The source now (an instrumented read of src_bytes), zeros past it.
  unsigned char data[16] = {};
  if (src_bytes == Bytes)
    std::memcpy(data, src, Bytes);
  else
    for (int i = 0; i < src_bytes; ++i) data[i] = static_cast<const unsigned char*>(src)[i];
  // Until the wait, the destination holds poison: a premature reader reads NaNs.
  unsigned char poison[16];
  std::memset(poison, 0xff, sizeof poison);
  write_bytes(dst, poison, Bytes);
  ::wb::emu::async_copy_issue(at, dst, data, Bytes);
}

// Lands the copies a wait leaving `pending` groups outstanding covers (pending < 0:
// all): each a write by this thread, here.
inline void land(int pending) {
  const ::wb::emu::UncountedScope model;  // counted at the issue, as the hardware's copy
  ::wb::emu::AsyncCopy c;
  while (::wb::emu::async_copy_take(pending, &c)) write_bytes(c.dst, c.data, c.bytes);
}

}  // namespace detail

inline void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], const float (&c)[4],
                              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  const ::wb::emu::Site at = detail::site(file, line);
  const detail::MmaOperands mine{{a[0], a[1], a[2], a[3]}, {b[0], b[1]}};
  uint64_t lanes[32];
  // Meet and exchange where each lane's registers are; compute this lane's D (reading
  // c now: d may be c); meet again, so that no lane's copy goes out of scope while
  // another still reads it; then write d. Neither meeting orders memory: mma.sync is
  // no memory barrier.
  ::wb::emu::warp_matrix(at, "mma.sync.m16n8k16 (mma_m16n8k16_bf16)", reinterpret_cast<std::uintptr_t>(&mine), lanes,
                         false);
  float out[4];
  detail::mma_lane(out, c, lanes, detail::lane_of_thread());
  ::wb::emu::warp_matrix(at, "mma.sync.m16n8k16 (mma_m16n8k16_bf16)", 0, nullptr, false);
  for (int i = 0; i < 4; ++i) d[i] = out[i];
}

#define WB_EMU_LDMATRIX(name, count, trans)                                                              \
  inline void name(uint32_t (&r)[count], const void* row, const char* file = __builtin_FILE(),           \
                   int line = __builtin_LINE()) {                                                        \
    detail::ldmatrix<count, trans>(r, row, #name, file, line);                                           \
  }
WB_EMU_LDMATRIX(ldmatrix_x1, 1, false)
WB_EMU_LDMATRIX(ldmatrix_x2, 2, false)
WB_EMU_LDMATRIX(ldmatrix_x4, 4, false)
WB_EMU_LDMATRIX(ldmatrix_x1_trans, 1, true)
WB_EMU_LDMATRIX(ldmatrix_x2_trans, 2, true)
WB_EMU_LDMATRIX(ldmatrix_x4_trans, 4, true)
#undef WB_EMU_LDMATRIX

template <int Bytes>
inline void cp_async_ca(void* dst, const void* src, int src_bytes = Bytes, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE()) {
  detail::cp_async<Bytes>("cp_async_ca", dst, src, src_bytes, detail::site(file, line));
}

// PTX allows .cg with 16 bytes only; nvcc's side refuses others at compile time. Here
// another size compiles (so that a test can plant it) and faults at run time.
template <int Bytes>
inline void cp_async_cg(void* dst, const void* src, int src_bytes = Bytes, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE()) {
  if (Bytes != 16)
    ::wb::emu::fault_at(detail::site(file, line), ::wb::emu::kLaunchFailure, "cp.async",
                        "cp_async_cg<" + std::to_string(Bytes) + ">: cp.async.cg copies 16 bytes only (PTX ISA)");
  detail::cp_async<Bytes>("cp_async_cg", dst, src, src_bytes, detail::site(file, line));
}

inline void cp_async_commit() { ::wb::emu::async_copy_commit(); }

// cp.async.wait_group N: the copies of every committed group but the N most recent
// land now, in the order they were issued.
template <int N>
inline void cp_async_wait() {
  static_assert(N >= 0, "cp.async.wait_group takes a count of groups");
  detail::land(N);
}

// cp.async.wait_all: commit, then wait for every group (the copies not yet committed
// land too).
inline void cp_async_wait_all() {
  ::wb::emu::async_copy_commit();
  detail::land(-1);
}

}  // namespace cuda::tc
}  // namespace emu_build
}  // namespace wb
