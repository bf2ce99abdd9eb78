// Stochastic rounding to bf16 (base/stochastic_rounding.h), which adamw_bf16 uses to
// write the bf16 parameters: unbiased, exact on bf16 values, reproducible.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>

#include "base/bf16.h"
#include "base/stochastic_rounding.h"

namespace wb {
namespace {

float rounded(float x, uint32_t noise) { return to_float(bf16::from_bits(stochastic_round_bits(float_bits(x), noise))); }

// Over all 2^16 values of the noise's low bits, the rounded values average to x exactly:
// the two neighbours, weighted by how often each is chosen.
TEST(StochasticRounding, AveragesToTheValueOverEveryNoise) {
  for (const float x : {1.00390625f * 1.3f, -0.7071067811865476f, 3.14159265f, 1e-3f, -12345.678f, 1e-40f}) {
    const float down = to_float(to_bf16_rz(x));
    double sum = 0;
    for (uint32_t noise = 0; noise < 65536; ++noise) {
      const float r = rounded(x, noise);
      ASSERT_TRUE(r == down || std::fabs(r) > std::fabs(down)) << x;
      sum += r;
    }
    EXPECT_EQ(sum / 65536.0, double(x)) << x;
  }
}

TEST(StochasticRounding, LeavesBf16ValuesInfinitiesAndNaNsAsCudaDoes) {
  for (const float x : {1.0f, -2.5f, 0.0f, -0.0f, 65280.0f, INFINITY, -INFINITY})
    for (const uint32_t noise : {0u, 1u, 0x7FFFu, 0xFFFFu, 0xDEADBEEFu}) EXPECT_EQ(float_bits(rounded(x, noise)), float_bits(x));
  EXPECT_EQ(stochastic_round_bits(float_bits(NAN), 123), kBf16CanonicalNaN);
  // The largest finite bf16 plus a little rounds up to infinity sometimes, as rounding up does.
  const float big = to_float(bf16::from_bits(0x7F7F)) * (1.0f + 1e-3f);
  EXPECT_EQ(rounded(big, 0), INFINITY);
  EXPECT_EQ(rounded(big, 0xFFFF), to_float(bf16::from_bits(0x7F7F)));
}

// The noise is a function of (index, seed) alone, differs between neighbours and seeds,
// and its low 16 bits -- the part the rounding reads -- are spread evenly.
TEST(StochasticRounding, NoiseIsReproducibleAndEven) {
  EXPECT_EQ(rounding_noise(42, 7), rounding_noise(42, 7));
  EXPECT_NE(rounding_noise(42, 7), rounding_noise(43, 7));
  EXPECT_NE(rounding_noise(42, 7), rounding_noise(42, 8));
  EXPECT_NE(rounding_noise(uint64_t(1) << 32, 7), rounding_noise(0, 7));  // the index's high half counts
  constexpr int kCount = 1 << 16;
  double sum = 0;
  std::set<uint32_t> distinct;
  for (uint64_t i = 0; i < kCount; ++i) {
    const uint32_t low = rounding_noise(i, 99) & 0xFFFF;
    sum += low;
    distinct.insert(low);
  }
  EXPECT_NEAR(sum / kCount, 32767.5, 0.01 * 32768);
  EXPECT_GT(distinct.size(), kCount / 2u);  // a random function leaves about 63% distinct
}

}  // namespace
}  // namespace wb
