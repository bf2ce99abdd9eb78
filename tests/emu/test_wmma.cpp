// The emulator's warp matrix functions (emu/include/mma.h): __float_to_tf32
// against a reference computed in double, for every class of float; the fragment
// layouts drawn per seed; loads and stores that round-trip; mma_sync against a plain
// fp32 matmul; and the faults of a misused call. Compiled for the emulator (WB_EMU).
#include "device/cuda/dialect.cuh"
#include "emu/shim.h"  // first: this file is CUDA source compiled for the emulator

#include <gtest/gtest.h>
#include <mma.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/errors.h"
#include "emu/emu.h"
#include "tests/emu/emu_testing.h"

namespace wb::emu_wmma {
namespace {

namespace wmma = nvcuda::wmma;

// ---------------------------------------------------------------------------------
// Kernels (one warp each unless told)

// A 16x16 float matrix in through an accumulator fragment and out again: `in` read
// row-major with stride ldm_in, `out` written column-major with stride 16.
__global__ void accumulator_round_trip(float* out, const float* in, unsigned ldm_in) {
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> f;
  wmma::load_matrix_sync(f, in, ldm_in, wmma::mem_row_major);
  wmma::store_matrix_sync(out, f, 16, wmma::mem_col_major);
}

// D = A * B + C for tf32 m16n16k8: A 16x8 row-major (ld 8), B 8x16 col-major (ld 8),
// C 16x16 row-major (ld 16); D row-major (ld 16). Rounds A and B to tf32 with one
// elementwise operation on every x[i], as CUDA's guide allows.
__global__ void mma_tf32(float* d, const float* a, const float* b, const float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::load_matrix_sync(fa, a, 8);
  wmma::load_matrix_sync(fb, b, 8);
  for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
  for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
  wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// The same for bf16 m16n16k16: A 16x16 col-major, B 16x16 row-major (both ld 16), C
// filled with `c0`.
__global__ void mma_bf16(float* d, const __nv_bfloat16* a, const __nv_bfloat16* b, float c0) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::col_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, c0);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// Planted: writes lane * 8 + i into x[i], as if the layout were known, and stores it.
__global__ void assumes_a_layout(float* out) {
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> f;
  wmma::fill_fragment(f, 0.0f);
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = float(threadIdx.x % 32 * 8 + i);
  wmma::store_matrix_sync(out, f, 16, wmma::mem_row_major);
}

// Planted: the last lane leaves before the warp's load.
__global__ void lane_missing(float* out, const float* in) {
  if (threadIdx.x == 31) return;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> f;
  wmma::load_matrix_sync(f, in, 16, wmma::mem_row_major);
  wmma::store_matrix_sync(out, f, 16, wmma::mem_row_major);
}

// Loads an accumulator from a shared array nobody wrote (initcheck: poison, NaN).
__global__ void load_unwritten_shared(float* out) {
  WB_SHARED_ALIGNED(128, float, tile, [256]);
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> f;
  wmma::load_matrix_sync(f, tile, 16, wmma::mem_row_major);
  wmma::store_matrix_sync(out, f, 16, wmma::mem_row_major);
}

// ---------------------------------------------------------------------------------
// Host side

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// cvt.rna.tf32.f32 computed another way: in double, the value divided by the tf32
// quantum of its binade (2^(e - 11) for a value in [2^(e-1), 2^e), never below the
// subnormal quantum 2^-136 that 10 of float's 23 stored bits give), rounded half away
// from zero, multiplied back; infinity past the largest tf32.
uint32_t reference_tf32(uint32_t u) {
  const float f = float_of(u);
  if (std::isnan(f) || std::isinf(f) || f == 0.0f) return u;
  const double magnitude = std::fabs(double(f));
  int e = 0;
  std::frexp(magnitude, &e);
  const double quantum = std::ldexp(1.0, std::max(e - 11, -136));
  const double rounded = std::floor(magnitude / quantum + 0.5) * quantum;
  const float r = rounded >= std::ldexp(1.0, 128) ? std::numeric_limits<float>::infinity() : float(rounded);
  return bits_of(f < 0 ? -r : r);
}

void expect_tf32(uint32_t u) {
  const uint32_t got = bits_of(wmma::__float_to_tf32(float_of(u)));
  ASSERT_EQ(got, reference_tf32(u)) << std::hex << "input 0x" << u << " gives 0x" << got;
}

template <class T>
using Device = emu_testing::DeviceArray<T>;
using emu_testing::launch_error;

class Wmma : public emu_testing::EmuTest {};

std::vector<float> random_floats(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// ---------------------------------------------------------------------------------
// __float_to_tf32

TEST(FloatToTf32, EveryClassOfFloat) {
  const uint32_t specials[] = {
      0x00000000u, 0x80000000u,                            // zeros
      0x00000001u, 0x80000001u, 0x00000fffu, 0x00001000u,  // subnormals: smallest, just under and at a tie
      0x00001001u, 0x00003000u, 0x80003000u, 0x007fffffu,  // above a tie, ties from odd, largest subnormal
      0x807fffffu, 0x007ff000u,                            // ... rounding up into the smallest normal
      0x00800000u, 0x3f800000u, 0xbf800000u,               // smallest normal, +-1
      0x3f801000u, 0xbf801000u,                            // ties: away from zero both ways (even below)
      0x3f803000u, 0xbf803000u,                            // ties with an odd tf32 below: away too
      0x3f800fffu, 0x3f801001u, 0xbf800fffu, 0xbf801001u,  // just under and over a tie
      0x3fffffffu, 0x3ffff000u, 0xbffff000u,               // carries into the next binade
      0x7f7fe000u, 0x7f7fefffu, 0x7f7ff000u, 0xff7ff000u,  // largest tf32, under, at the overflow tie
      0x7f7fffffu, 0xff7fffffu,                            // largest float: infinity
      0x7f800000u, 0xff800000u,                            // infinities
      0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa00000u,  // quiet and signalling NaNs
      0x7f801000u, 0x7fffffffu, 0xffffffffu,               // NaNs whose payload rounding would carry
  };
  for (uint32_t u : specials) expect_tf32(u);
  // Ties go away from zero in both directions, never to even.
  EXPECT_EQ(bits_of(wmma::__float_to_tf32(float_of(0x3f801000u))), 0x3f802000u);
  EXPECT_EQ(bits_of(wmma::__float_to_tf32(float_of(0xbf801000u))), 0xbf802000u);
  EXPECT_EQ(bits_of(wmma::__float_to_tf32(float_of(0x3f803000u))), 0x3f804000u);
  EXPECT_EQ(bits_of(wmma::__float_to_tf32(float_of(0x7f7fffffu))), 0x7f800000u);
  EXPECT_TRUE(std::isnan(wmma::__float_to_tf32(float_of(0x7f800001u))));
  // Every exponent with every pattern of the low 14 bits, and random words.
  for (uint32_t top = 0; top < 0x200u; ++top)
    for (uint32_t low = 0; low < 0x4000u; low += 7) expect_tf32(top << 23 | (0x5a5a5u << 14 & 0x7fffffu) | low);
  std::mt19937 rng(2024);
  for (int i = 0; i < 1 << 20; ++i) expect_tf32(uint32_t(rng()));
}

// ---------------------------------------------------------------------------------
// Layouts

TEST(FragmentLayout, IsAPermutationDrawnPerSeed) {
  for (uint32_t kind : {1u, 3u, 4u}) {
    const int rows = kind == 1 ? 16 : 16, cols = kind == 1 ? 8 : 16, n = rows * cols;
    const uint16_t* one = emu::fragment_layout(kind, rows, cols, 1);
    const uint16_t* two = emu::fragment_layout(kind, rows, cols, 2);
    EXPECT_EQ(one, emu::fragment_layout(kind, rows, cols, 1)) << "a seed's table is made once";
    std::set<int> seen;
    bool differ = false;
    for (int s = 0; s < n; ++s) {
      seen.insert(one[s]);
      EXPECT_EQ(one[n + one[s]], s) << "owner is the inverse of element";
      EXPECT_EQ(two[n + two[s]], s);
      differ |= one[s] != two[s];
    }
    EXPECT_EQ(int(seen.size()), n) << "every element held once";
    EXPECT_TRUE(differ) << "seeds 1 and 2 draw the same layout for kind " << kind;
  }
  // Fragment kinds of one seed differ too (the accumulators of k8 and k16 are two kinds).
  const uint16_t* k8 = emu::fragment_layout(3, 16, 16, 5);
  const uint16_t* k16 = emu::fragment_layout(6, 16, 16, 5);
  EXPECT_NE(std::vector<uint16_t>(k8, k8 + 256), std::vector<uint16_t>(k16, k16 + 256));
}

TEST_F(Wmma, LoadThenStoreRoundTripsExactlyWithAnyLayout) {
  const unsigned ldm = 20;  // padded rows, a multiple of 4 floats
  Device<float> in(16 * ldm), out(256);
  std::mt19937 rng(7);
  for (std::size_t i = 0; i < in.n; ++i) in.p[i] = float_of(uint32_t(rng()) & 0xbf7fffffu);  // finite, any bits
  for (uint64_t seed : {1u, 2u, 3u}) {
    emu::set_schedule({true, seed});
    WB_LAUNCH(accumulator_round_trip, 1, 32, 0, nullptr, out.p, in.p, ldm);
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c)
        ASSERT_EQ(bits_of(out.p[c * 16 + r]), bits_of(in.p[r * ldm + c])) << "seed " << seed << " (" << r << "," << c << ")";
  }
}

TEST_F(Wmma, CodeThatAssumesALayoutGetsAnotherResultPerSeed) {
  Device<float> out(256);
  std::vector<std::vector<float>> results;
  for (uint64_t seed : {1u, 2u}) {
    emu::set_schedule({false, seed});
    WB_LAUNCH(assumes_a_layout, 1, 32, 0, nullptr, out.p);
    results.emplace_back(out.p, out.p + 256);
  }
  EXPECT_NE(results[0], results[1]);
}

// ---------------------------------------------------------------------------------
// mma_sync

TEST_F(Wmma, Tf32MmaIsAPlainFp32Matmul) {
  Device<float> a(16 * 8), b(16 * 8), c(256), d(256);
  const std::vector<float> ha = random_floats(a.n, 1), hb = random_floats(b.n, 2), hc = random_floats(c.n, 3);
  std::copy(ha.begin(), ha.end(), a.p);
  std::copy(hb.begin(), hb.end(), b.p);
  std::copy(hc.begin(), hc.end(), c.p);
  for (uint64_t seed : {11u, 12u}) {
    emu::set_schedule({true, seed});
    WB_LAUNCH(mma_tf32, 1, 32, 0, nullptr, d.p, a.p, b.p, c.p);
    for (int r = 0; r < 16; ++r) {
      for (int col = 0; col < 16; ++col) {
        // The emulator's order: C, then k = 0..7, each product and sum rounded to fp32.
        float sum = hc[r * 16 + col];
        double exact = sum;
        for (int k = 0; k < 8; ++k) {
          const float x = wmma::__float_to_tf32(ha[r * 8 + k]), y = wmma::__float_to_tf32(hb[col * 8 + k]);
          sum = sum + x * y;
          exact += double(x) * double(y);
        }
        ASSERT_EQ(bits_of(d.p[r * 16 + col]), bits_of(sum)) << "seed " << seed << " (" << r << "," << col << ")";
        EXPECT_NEAR(d.p[r * 16 + col], exact, 1e-5);
      }
    }
  }
}

TEST_F(Wmma, Bf16MmaIsAPlainFp32Matmul) {
  Device<__nv_bfloat16> a(256), b(256);
  Device<float> d(256);
  const std::vector<float> ha = random_floats(256, 4), hb = random_floats(256, 5);
  for (int i = 0; i < 256; ++i) {
    a.p[i] = __float2bfloat16(ha[i]);
    b.p[i] = __float2bfloat16(hb[i]);
  }
  for (uint64_t seed : {21u, 22u}) {
    emu::set_schedule({true, seed});
    WB_LAUNCH(mma_bf16, 1, 32, 0, nullptr, d.p, a.p, b.p, 0.5f);
    for (int r = 0; r < 16; ++r) {
      for (int col = 0; col < 16; ++col) {
        float sum = 0.5f;
        for (int k = 0; k < 16; ++k) sum = sum + float(a.p[k * 16 + r]) * float(b.p[k * 16 + col]);  // A col-major
        ASSERT_EQ(bits_of(d.p[r * 16 + col]), bits_of(sum)) << "seed " << seed << " (" << r << "," << col << ")";
      }
    }
  }
}

// ---------------------------------------------------------------------------------
// Faults

TEST_F(Wmma, ALaneMissingIsASynccheckFaultNamingIt) {
  Device<float> in(256), out(256);
  const std::string e = launch_error([&] { WB_LAUNCH(lane_missing, 1, 32, 0, nullptr, out.p, in.p); });
  EXPECT_NE(e.find("synccheck: kernel lane_missing"), std::string::npos) << e;
  EXPECT_NE(e.find("lane 31 exits while lanes of its warp wait for it"), std::string::npos) << e;
}

TEST_F(Wmma, AStrideOffSixteenBytesOrAPointerOff32BytesIsAFault) {
  Device<float> in(512), out(256);
  std::string e = launch_error([&] { WB_LAUNCH(accumulator_round_trip, 1, 32, 0, nullptr, out.p, in.p, 18u); });
  EXPECT_NE(e.find("cudaErrorMisalignedAddress"), std::string::npos) << e;
  EXPECT_NE(e.find("wmma::load_matrix_sync: ldm 18 is not a multiple of 4 elements (16 bytes)"), std::string::npos) << e;
  emu::reset();
  e = launch_error([&] { WB_LAUNCH(accumulator_round_trip, 1, 32, 0, nullptr, out.p, in.p + 4, 16u); });
  EXPECT_NE(e.find("wmma::load_matrix_sync: the matrix pointer is not 32-byte (256-bit) aligned"), std::string::npos)
      << e;
}

TEST_F(Wmma, LoadsAreCheckedLikeAnyLoad) {
  Device<float> out(256);
  WB_LAUNCH(load_unwritten_shared, 1, 32, 0, nullptr, out.p);
  for (int i = 0; i < 256; ++i) ASSERT_TRUE(std::isnan(out.p[i])) << "unwritten shared memory reads as poison: " << i;
}

// A store past the end of a buffer is a memcheck fault (the canary behind it). A planted
// out-of-bounds write: left out of the AddressSanitizer ctest, which stops at the write
// itself (ci/sanitized_tests.sh).
TEST_F(Wmma, StorePastTheEndIsAMemcheckFault) {
  Device<float> in(256), small(200);
  const std::string e = launch_error([&] { WB_LAUNCH(accumulator_round_trip, 1, 32, 0, nullptr, small.p, in.p, 16u); });
  EXPECT_NE(e.find("memcheck"), std::string::npos) << e;
}

}  // namespace
}  // namespace wb::emu_wmma
