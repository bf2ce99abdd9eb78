// The emulator's tensor-core instructions (emu/tensor_core_instructions.h, the interface of
// device/cuda/tensor_core_ptx.cuh): mma.sync m16n8k16 bf16 against a plain fp32 matmul,
// with the fragments packed here from the PTX ISA's per-lane formulas; every ldmatrix
// form against its formula; cp.async's poison before the wait, data after, groups,
// zero-fill and wait_all; every fault of a misused instruction, each naming the call
// and the lane or thread; and the schedule that shows a pipeline's refill issued
// before the barrier. Compiled for the emulator (WB_EMU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device/cuda/dialect.cuh"
#include "device/cuda/tensor_core_ptx.cuh"
#include "emu/emu.h"
#include "emu/shim.h"  // first: this file is CUDA source compiled for the emulator
#include "tests/emu/emu_testing.h"
#include "tests/planted/tensor_core_faults.cuh"
#include "tests/support/test_helpers.h"

namespace wb::emu_tc {
namespace {

namespace tc = cuda::tc;

template <class T>
using Device = emu_testing::DeviceArray<T>;
using emu_testing::launch_error;

using ::wb::testing::contains;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// ---------------------------------------------------------------------------------
// mma.sync m16n8k16

// One warp: D (16x8, row-major) = A (16x16, row-major) * B (16x8, stored B[k][n]) + C
// (16x8 row-major). Each lane packs its registers from memory by the PTX ISA's formulas
// (g = lane / 4, t = lane % 4), written out here apart from the emulator's: a[0] =
// A[g][2t..2t+1], a[1] = A[g+8][2t..], a[2] = A[g][2t+8..], a[3] = A[g+8][2t+8..];
// b[0] = B[2t..2t+1][g], b[1] = B[2t+8..2t+9][g]; c = {C[g][2t], C[g][2t+1],
// C[g+8][2t], C[g+8][2t+1]}. `in_place`: D into the registers of C.
__global__ void mma_from_formulas(float* d, const __nv_bfloat16* a, const __nv_bfloat16* b, const float* c,
                                  bool in_place) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  auto A = [&](int r, int k) { return a[r * 16 + k]; };
  auto B = [&](int k, int n) { return b[k * 8 + n]; };
  const uint32_t fa[4] = {
      tc::pack_bf16x2(A(g, 2 * t), A(g, 2 * t + 1)), tc::pack_bf16x2(A(g + 8, 2 * t), A(g + 8, 2 * t + 1)),
      tc::pack_bf16x2(A(g, 2 * t + 8), A(g, 2 * t + 9)), tc::pack_bf16x2(A(g + 8, 2 * t + 8), A(g + 8, 2 * t + 9))};
  const uint32_t fb[2] = {tc::pack_bf16x2(B(2 * t, g), B(2 * t + 1, g)),
                          tc::pack_bf16x2(B(2 * t + 8, g), B(2 * t + 9, g))};
  float acc[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
  float out[4];
  if (in_place) {
    tc::mma_m16n8k16_bf16(acc, fa, fb, acc);
  } else {
    tc::mma_m16n8k16_bf16(out, fa, fb, acc);
    for (int i = 0; i < 4; ++i) acc[i] = out[i];
  }
  d[g * 8 + 2 * t] = acc[0];
  d[g * 8 + 2 * t + 1] = acc[1];
  d[(g + 8) * 8 + 2 * t] = acc[2];
  d[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

// Planted: the last lane leaves before the mma.
__global__ void mma_lane_missing(float* d) {
  if (threadIdx.x == 31) return;
  const uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  float acc[4] = {0, 0, 0, 0};
  tc::mma_m16n8k16_bf16(acc, a, b, acc);
  d[threadIdx.x] = acc[0];
}

class TensorCore : public emu_testing::EmuTest {};

TEST_F(TensorCore, MmaIsAPlainFp32MatmulOfThePtxFragments) {
  Device<__nv_bfloat16> a(256), b(128);
  Device<float> c(128), d(128);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (std::size_t i = 0; i < a.n; ++i) a.p[i] = __float2bfloat16(u(rng));
  for (std::size_t i = 0; i < b.n; ++i) b.p[i] = __float2bfloat16(u(rng));
  for (std::size_t i = 0; i < c.n; ++i) c.p[i] = u(rng);
  for (bool in_place : {false, true}) {
    WB_LAUNCH(mma_from_formulas, 1, 32, 0, nullptr, d.p, a.p, b.p, c.p, in_place);
    for (int r = 0; r < 16; ++r) {
      for (int n = 0; n < 8; ++n) {
        // The emulator's order: C, then k = 0..15, every product and sum in fp32.
        float sum = c.p[r * 8 + n];
        double exact = sum;
        for (int k = 0; k < 16; ++k) {
          sum = sum + float(a.p[r * 16 + k]) * float(b.p[k * 8 + n]);
          exact += double(float(a.p[r * 16 + k])) * double(float(b.p[k * 8 + n]));
        }
        ASSERT_EQ(bits_of(d.p[r * 8 + n]), bits_of(sum)) << "in_place " << in_place << " (" << r << "," << n << ")";
        EXPECT_NEAR(d.p[r * 8 + n], exact, 1e-5);
      }
    }
  }
}

TEST_F(TensorCore, MmaWithALaneMissingIsASynccheckFaultNamingIt) {
  Device<float> d(32);
  const std::string e = launch_error([&] { WB_LAUNCH(mma_lane_missing, 1, 32, 0, nullptr, d.p); });
  EXPECT_TRUE(contains(e, "synccheck: kernel mma_lane_missing")) << e;
  EXPECT_TRUE(contains(e, "lane 31 exits while lanes of its warp wait for it")) << e;
}

// ---------------------------------------------------------------------------------
// ldmatrix

// Four 8x8 matrices of 16-bit elements, element (j, r, c) = j * 64 + r * 8 + c + 1,
// placed in a shared array row by row at scattered slots of 24 elements (48 bytes: rows
// 16-byte aligned, not contiguous), so that only the lanes' addresses say where a row
// is. Lane l gives the address of row l % 8 of matrix l / 8 when that matrix is loaded,
// and an address that may not be read (misaligned, outside shared memory) otherwise.
// out[l * 4 + j] = r[j] of lane l.
constexpr int kSlot = 24;
__device__ inline int slot_of(int j, int r) { return (r * 4 + j) * 7 % 32; }  // a permutation of 0..31

__global__ void ldmatrix_form(uint32_t* out, int count, bool trans) {
  WB_SHARED_ALIGNED(16, uint16_t, tile, [32 * kSlot]);
  const int lane = threadIdx.x;
  for (int e = lane; e < 32 * kSlot; e += 32) {
    const int s = e / kSlot, c = e % kSlot;
    int j = 0, r = 0;
    for (int jj = 0; jj < 4; ++jj)
      for (int rr = 0; rr < 8; ++rr)
        if (slot_of(jj, rr) == s) j = jj, r = rr;
    tile[e] = c < 8 ? uint16_t(j * 64 + r * 8 + c + 1) : uint16_t(0xdead);
  }
  __syncwarp();
  const void* row = lane < 8 * count ? static_cast<const void*>(&tile[slot_of(lane / 8, lane % 8) * kSlot])
                                     : reinterpret_cast<const void*>(uintptr_t(1));  // never read
  uint32_t r[4] = {0, 0, 0, 0};
  uint32_t(&r1)[1] = *reinterpret_cast<uint32_t(*)[1]>(r);
  uint32_t(&r2)[2] = *reinterpret_cast<uint32_t(*)[2]>(r);
  if (count == 1) trans ? tc::ldmatrix_x1_trans(r1, row) : tc::ldmatrix_x1(r1, row);
  if (count == 2) trans ? tc::ldmatrix_x2_trans(r2, row) : tc::ldmatrix_x2(r2, row);
  if (count == 4) trans ? tc::ldmatrix_x4_trans(r, row) : tc::ldmatrix_x4(r, row);
  for (int j = 0; j < 4; ++j) out[lane * 4 + j] = r[j];
}

TEST_F(TensorCore, EveryLdmatrixFormGivesEachLaneItsPtxElements) {
  Device<uint32_t> out(128);
  auto element = [](int j, int r, int c) { return uint32_t(j * 64 + r * 8 + c + 1); };
  for (int count : {1, 2, 4}) {
    for (bool trans : {false, true}) {
      WB_LAUNCH(ldmatrix_form, 1, 32, 0, nullptr, out.p, count, trans);
      for (int l = 0; l < 32; ++l) {
        for (int j = 0; j < 4; ++j) {
          uint32_t want = 0;  // registers past the matrices loaded are left as they were
          if (j < count) {
            // Lane l: row l / 4, columns 2 (l % 4) and +1; .trans: rows 2 (l % 4) and +1 of
            // column l / 4. The low half holds the lower index.
            const int q = l / 4, p = 2 * (l % 4);
            want =
                trans ? element(j, p, q) | element(j, p + 1, q) << 16 : element(j, q, p) | element(j, q, p + 1) << 16;
          }
          ASSERT_EQ(out.p[l * 4 + j], want)
              << "x" << count << (trans ? ".trans" : "") << " lane " << l << " r[" << j << "]";
        }
      }
    }
  }
}

// Planted: lane `bad` gives a row address `offset` bytes off its row (row 0 of
// matrix 0 for every lane but `bad`, a tile of 8 rows of 16 bytes).
__global__ void ldmatrix_bad_row(uint32_t* out, int bad, int offset, bool leave) {
  WB_SHARED_ALIGNED(16, uint16_t, tile, [8 * 8]);
  const int lane = threadIdx.x;
  for (int e = lane; e < 64; e += 32) tile[e] = uint16_t(e);
  __syncwarp();
  if (leave && lane == bad) return;
  const char* row = reinterpret_cast<const char*>(&tile[(lane % 8) * 8]);
  if (lane == bad) row += offset;
  uint32_t r[1];
  tc::ldmatrix_x1(r, row);
  out[lane] = r[0];
}

TEST_F(TensorCore, LdmatrixWithALaneMissingIsASynccheckFaultNamingIt) {
  Device<uint32_t> out(32);
  const std::string e = launch_error([&] { WB_LAUNCH(ldmatrix_bad_row, 1, 32, 0, nullptr, out.p, 20, 0, true); });
  EXPECT_TRUE(contains(e, "synccheck: kernel ldmatrix_bad_row")) << e;
  EXPECT_TRUE(contains(e, "lane 20 exits while lanes of its warp wait for it")) << e;
}

TEST_F(TensorCore, AMisalignedLdmatrixRowIsAFaultNamingTheLaneAndTheCall) {
  Device<uint32_t> out(32);
  const std::string e = launch_error([&] { WB_LAUNCH(ldmatrix_bad_row, 1, 32, 0, nullptr, out.p, 5, 8, false); });
  EXPECT_TRUE(contains(e, "cudaErrorMisalignedAddress")) << e;
  EXPECT_TRUE(contains(e,
                       "memcheck: kernel ldmatrix_bad_row, block (0,0,0), thread (5,0,0): ldmatrix_x1: lane 5's "
                       "row address"))
      << e;
  EXPECT_TRUE(contains(e, "(row 5 of matrix 0) is not 16-byte aligned at tests/emu/test_tensor_core.cpp:")) << e;
}

TEST_F(TensorCore, AnLdmatrixRowOutsideSharedMemoryIsAFaultNamingTheLane) {
  Device<uint32_t> out(32);
  // Lane 7 gives row 8 of an 8-row tile: 16 bytes past its end (checked, never read).
  const std::string e = launch_error([&] { WB_LAUNCH(ldmatrix_bad_row, 1, 32, 0, nullptr, out.p, 7, 16, false); });
  EXPECT_TRUE(contains(e, "cudaErrorIllegalAddress")) << e;
  EXPECT_TRUE(contains(e, "thread (7,0,0): ldmatrix_x1: lane 7's row address")) << e;
  EXPECT_TRUE(
      contains(e, "its 16 bytes do not lie inside the block's shared memory at tests/emu/test_tensor_core.cpp:"))
      << e;
  // A lane past the matrices loaded may give any address: x1 reads lanes 0-7 only.
  emu::reset();
  WB_LAUNCH(ldmatrix_bad_row, 1, 32, 0, nullptr, out.p, 8, 1000000, false);
  EXPECT_EQ(out.p[8], 16u | 17u << 16);  // lane 8: row 2 (elements 16..23), columns 0 and 1
}

// ---------------------------------------------------------------------------------
// cp.async

// Bits of float, for a 16-byte row of 4.
std::vector<uint32_t> words(const float* p, int n) {
  std::vector<uint32_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = bits_of(p[i]);
  return v;
}

// Thread 0: two groups of one 16-byte copy each (into s1, then s2), with snapshots of
// both after each step: out[0..7] after issue (before any wait), out[8..15] after
// wait<1>, out[16..23] after wait<0>.
__global__ void two_groups(float* out, const float* src) {
  WB_SHARED_ALIGNED(16, float, s1, [4]);
  WB_SHARED_ALIGNED(16, float, s2, [4]);
  for (int i = 0; i < 4; ++i) s1[i] = s2[i] = -1.0f;  // written: only the copies make them poison
  tc::cp_async_ca<16>(s1, src);
  tc::cp_async_commit();
  tc::cp_async_cg<16>(s2, src + 4);
  tc::cp_async_commit();
  auto snap = [&](float* o) {
    for (int i = 0; i < 4; ++i) o[i] = s1[i], o[4 + i] = s2[i];
  };
  snap(out);
  tc::cp_async_wait<1>();
  snap(out + 8);
  tc::cp_async_wait<0>();
  snap(out + 16);
}

TEST_F(TensorCore, CpAsyncDataIsPoisonUntilTheWaitForItsGroup) {
  Device<float> src(8), out(24);
  for (int i = 0; i < 8; ++i) src.p[i] = float(i + 1);
  WB_LAUNCH(two_groups, 1, 1, 0, nullptr, out.p, src.p);
  const std::vector<uint32_t> poison(4, 0xffffffffu), first = words(src.p, 4), second = words(src.p + 4, 4);
  const std::vector<uint32_t> got = words(out.p, 24);
  auto part = [&](int at) { return std::vector<uint32_t>(got.begin() + at, got.begin() + at + 4); };
  EXPECT_EQ(part(0), poison) << "s1 before any wait";
  EXPECT_EQ(part(4), poison) << "s2 before any wait";
  EXPECT_EQ(part(8), first) << "s1 after wait<1>: its group landed";
  EXPECT_EQ(part(12), poison) << "s2 after wait<1>: the most recent group still in flight";
  EXPECT_EQ(part(16), first) << "s1 after wait<0>";
  EXPECT_EQ(part(20), second) << "s2 after wait<0>";
}

// Thread 0, dynamic shared memory: copies of 4, 8 and 16 bytes with src_bytes less than
// the size (zero-filled), and one not committed: wait<0> leaves it in flight,
// wait_all lands it. out: the 32 bytes after wait<0>, then after wait_all.
__global__ void zero_fill_and_wait_all(unsigned char* out, const unsigned char* src) {
  WB_DYNAMIC_SHARED(unsigned char, smem);
  tc::cp_async_ca<4>(smem, src, 3);
  tc::cp_async_ca<8>(smem + 8, src + 8, 0);
  tc::cp_async_cg<16>(smem + 16, src + 16, 6);
  tc::cp_async_commit();
  tc::cp_async_ca<4>(smem + 4, src + 4);  // not committed
  tc::cp_async_wait<0>();
  for (int i = 0; i < 32; ++i) out[i] = smem[i];
  tc::cp_async_wait_all();
  for (int i = 0; i < 32; ++i) out[32 + i] = smem[i];
}

TEST_F(TensorCore, CpAsyncZeroFillsPastSrcBytesAndWaitAllLandsUncommittedCopies) {
  Device<unsigned char> src(32), out(64);
  for (int i = 0; i < 32; ++i) src.p[i] = uint8_t(0x10 + i);
  WB_LAUNCH(zero_fill_and_wait_all, 1, 1, 32, nullptr, out.p, src.p);
  for (int i = 0; i < 32; ++i) {
    uint8_t want = 0;
    if (i < 3 || (i >= 16 && i < 22)) want = src.p[i];                  // the first src_bytes bytes
    if (i == 3 || (i >= 8 && i < 16) || (i >= 22 && i < 32)) want = 0;  // zero-filled
    if (i >= 4 && i < 8) want = 0xff;  // the uncommitted copy: still in flight after wait<0>
    ASSERT_EQ(out.p[i], want) << "after wait<0>, byte " << i;
    ASSERT_EQ(out.p[32 + i], i >= 4 && i < 8 ? src.p[i] : want) << "after wait_all, byte " << i;
  }
}

// Planted misuse, one per `what`, by thread 3 of a warp (the others copy correctly).
// (idle: thread 3 issues nothing and returns, the correct control of never_waits.)
enum class Misuse { cg_four_bytes, src_bytes_too_many, dst_misaligned, src_misaligned, dst_global, never_waits, idle };
__global__ void misuse(float* global, const float* src, Misuse what) {
  WB_SHARED_ALIGNED(16, float, s, [32 * 4]);
  float* dst = &s[threadIdx.x * 4];
  if (threadIdx.x == 3) {
    switch (what) {
      case Misuse::cg_four_bytes:
        tc::cp_async_cg<4>(dst, src);
        break;
      case Misuse::src_bytes_too_many:
        tc::cp_async_ca<8>(dst, src, 9);
        break;
      case Misuse::dst_misaligned:
        tc::cp_async_ca<16>(dst + 1, src);
        break;
      case Misuse::src_misaligned:
        tc::cp_async_ca<8>(dst, src + 1);
        break;
      case Misuse::dst_global:
        tc::cp_async_ca<16>(global, src);
        break;
      case Misuse::never_waits:
        tc::cp_async_ca<16>(dst, src);
        tc::cp_async_commit();
        return;  // the copy is still in flight
      case Misuse::idle:
        return;
    }
  }
  tc::cp_async_ca<16>(dst, src + threadIdx.x * 4);
  tc::cp_async_wait_all();
  global[threadIdx.x] = dst[0];
}

TEST_F(TensorCore, EveryMisusedCpAsyncIsAFaultNamingTheCallAndTheThread) {
  Device<float> global(128), src(128, 1.0f);
  struct Case {
    Misuse what;
    const char* error;
    const char* message;
  };
  const Case cases[] = {
      {Misuse::cg_four_bytes, "cudaErrorLaunchFailure",
       "cp.async: kernel misuse, block (0,0,0), thread (3,0,0): cp_async_cg<4>: cp.async.cg copies 16 bytes only "
       "(PTX ISA) at tests/emu/test_tensor_core.cpp:"},
      {Misuse::src_bytes_too_many, "cudaErrorLaunchFailure",
       "thread (3,0,0): cp_async_ca<8>: src_bytes 9 is outside 0..8 at tests/emu/test_tensor_core.cpp:"},
      {Misuse::dst_misaligned, "cudaErrorMisalignedAddress",
       "memcheck: kernel misuse, block (0,0,0), thread (3,0,0): cp_async_ca<16>: the destination "},
      {Misuse::src_misaligned, "cudaErrorMisalignedAddress", "thread (3,0,0): cp_async_ca<8>: the source "},
      {Misuse::dst_global, "cudaErrorIllegalAddress", "thread (3,0,0): cp_async_ca<16>: the destination "},
      {Misuse::never_waits, "cudaErrorLaunchFailure",
       "cp.async: kernel misuse, block (0,0,0), thread (3,0,0): the thread ends with 1 asynchronous copy not waited "
       "for (the oldest issued at tests/emu/test_tensor_core.cpp:"},
  };
  for (const Case& c : cases) {
    emu::reset();
    const std::string e = launch_error([&] { WB_LAUNCH(misuse, 1, 32, 0, nullptr, global.p, src.p, c.what); });
    EXPECT_TRUE(contains(e, c.error)) << e;
    EXPECT_TRUE(contains(e, c.message)) << e;
  }
  // The alignment and placement faults say what is wrong with the address.
  emu::reset();
  std::string e = launch_error([&] { WB_LAUNCH(misuse, 1, 32, 0, nullptr, global.p, src.p, Misuse::dst_misaligned); });
  EXPECT_TRUE(contains(e, "is not 16-byte aligned at tests/emu/test_tensor_core.cpp:")) << e;
  emu::reset();
  e = launch_error([&] { WB_LAUNCH(misuse, 1, 32, 0, nullptr, global.p, src.p, Misuse::dst_global); });
  EXPECT_TRUE(contains(e, "(byte 0 of a device buffer of 512 bytes) does not lie inside the block's shared memory"))
      << e;
  // Each launch starts with empty queues: thread 3's copy left in flight by the last
  // never_waits is forgotten, so thread 3 issuing nothing ends cleanly, and the others'
  // copies land.
  emu::reset();
  e = launch_error([&] { WB_LAUNCH(misuse, 1, 32, 0, nullptr, global.p, src.p, Misuse::never_waits); });
  EXPECT_TRUE(contains(e, "the thread ends with 1 asynchronous copy")) << e;
  emu::reset();
  for (int i = 0; i < 32; ++i) global.p[i] = 0.0f;
  WB_LAUNCH(misuse, 1, 32, 0, nullptr, global.p, src.p, Misuse::idle);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(global.p[i], i == 3 ? 0.0f : 1.0f) << i;
}

// The two-warp mma.sync pipeline of tests/planted/tensor_core_faults.cuh at 64 x 64 x 64
// (four k steps, no ragged edge), all ones: every output is 64, or NaN where a warp
// read a stage that a refill had poisoned. Whether every output is 64.
template <planted_tc::Bug kBug>
bool pipeline_is_right() {
  constexpr int n = 64;
  Device<__nv_bfloat16> m(n * n, __float2bfloat16(1.0f)), out(n * n);
  const __nv_bfloat16* no_bias = nullptr;
  WB_LAUNCH(planted_tc::mma_matmul_bf16<kBug>, planted_tc::mma_matmul_grid(n, n), planted_tc::kThreads, 0, nullptr,
            out.p, m.p, m.p, no_bias, n, n, n);
  for (int i = 0; i < n * n; ++i)
    if (__bfloat162float(out.p[i]) != float(n)) return false;
  return true;
}

// A stage refilled before the barrier that ends the other warp's reads of it: in
// lockstep (a warp-wide operation per warp and round) the warps read and refill
// together and the result is right; when each warp runs alone from one barrier to the
// next, whichever warp runs first poisons what the other has yet to read, at every seed.
// The correct pipeline is right under every one of those schedules.
TEST_F(TensorCore, ARefillIssuedBeforeTheBarrierShowsWhenWarpsRunAlone) {
  EXPECT_TRUE(pipeline_is_right<planted_tc::Bug::refill_before_barrier>()) << "lockstep hides the race";
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    emu::Schedule alone;
    alone.seed = seed;
    alone.shuffled = seed % 2 == 0;
    alone.warps_alone = true;
    emu::set_schedule(alone);
    EXPECT_FALSE(pipeline_is_right<planted_tc::Bug::refill_before_barrier>()) << "seed " << seed;
    EXPECT_TRUE(pipeline_is_right<planted_tc::Bug::none>()) << "seed " << seed;
  }
}

}  // namespace
}  // namespace wb::emu_tc
