// The emulator's bf16 intrinsics (emu/include/cuda_bf16.h) against exact
// arithmetic: each operation on bf16 values is computed exactly and rounded once to
// nearest even, ties to even; the two-lane forms act per lane; conversions are
// base/bf16.h's (held against PyTorch by tests/python/test_bf16.py).
#include <cuda_bf16.h>  // the emulator's: this file is compiled for the emulator
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/bf16.h"

namespace wb {
namespace {

__nv_bfloat16 bf(float f) { return __float2bfloat16(f); }
uint16_t bits(__nv_bfloat16 h) { return __bfloat16_as_ushort(h); }

TEST(Bf16Intrinsics, AdditionRoundsTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to the even one, 1.
  EXPECT_EQ(float(__hadd(bf(1.0f), bf(std::ldexp(1.0f, -8)))), 1.0f);
  // (1 + 2^-7) + 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to the even one.
  EXPECT_EQ(float(__hadd(bf(1.0f + std::ldexp(1.0f, -7)), bf(std::ldexp(1.0f, -8)))), 1.0f + std::ldexp(1.0f, -6));
  // A truncating add would give 1 + 2^-7 here (the exact sum is above the halfway point).
  EXPECT_EQ(float(__hadd(bf(1.0f), bf(std::ldexp(1.0f, -8) + std::ldexp(1.0f, -12)))), 1.0f + std::ldexp(1.0f, -7));
}

TEST(Bf16Intrinsics, EveryOperationIsExactThenRoundedOnce) {
  std::mt19937 rng(26);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (int i = 0; i < 20000; ++i) {
    const __nv_bfloat16 a = bf(u(rng)), b = bf(u(rng)), c = bf(u(rng));
    const double x = double(float(a)), y = double(float(b)), z = double(float(c));
    EXPECT_EQ(bits(__hadd(a, b)), to_bf16(x + y).bits);
    EXPECT_EQ(bits(__hsub(a, b)), to_bf16(x - y).bits);
    EXPECT_EQ(bits(__hmul(a, b)), to_bf16(x * y).bits);
    EXPECT_EQ(bits(__hfma(a, b, c)), to_bf16(x * y + z).bits);
    const __nv_bfloat162 p = __halves2bfloat162(a, b), q = __halves2bfloat162(c, a);
    const __nv_bfloat162 s = __hfma2(p, q, p);
    EXPECT_EQ(bits(s.x), bits(__hfma(a, c, a)));
    EXPECT_EQ(bits(s.y), bits(__hfma(b, a, b)));
    EXPECT_EQ(bits((p + q).y), bits(__hadd(b, a)));
  }
}

TEST(Bf16Intrinsics, ConversionsAndSpecialValues) {
  EXPECT_EQ(bits(bf(NAN)), 0x7FFF) << "CUDA's canonical NaN";
  EXPECT_EQ(bits(bf(-INFINITY)), 0xFF80);
  EXPECT_EQ(bits(bf(3.4e38f)), 0x7F80) << "past the largest bf16, to nearest: infinity";
  EXPECT_EQ(bits(__float2bfloat16_rz(3.4e38f)), 0x7F7F) << "toward zero: the largest finite";
  EXPECT_EQ(bits(__hneg(bf(2.0f))), 0xC000);
  EXPECT_EQ(bits(__habs(bf(-2.0f))), 0x4000);
  EXPECT_EQ(float(__hmax(bf(1.0f), __ushort_as_bfloat16(0x7FFF))), 1.0f) << "max of a number and a NaN";
  const float2 f = __bfloat1622float2(__floats2bfloat162_rn(1.5f, -0.25f));
  EXPECT_EQ(f.x, 1.5f);
  EXPECT_EQ(f.y, -0.25f);
  EXPECT_EQ(__low2float(__float2bfloat162_rn(3.0f)), 3.0f);
  EXPECT_EQ(bits(__nv_bfloat16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20))), 0x3F81)
      << "the constructor rounds to nearest";
  EXPECT_EQ(bits(__nv_bfloat16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40))), 0x3F81)
      << "a double is rounded once, not through float (1 + 2^-8 + 2^-40 is not a tie)";
}

}  // namespace
}  // namespace wb
