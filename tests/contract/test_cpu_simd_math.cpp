// device/cpu/simd_math.h: the vectorisable exp and sigmoid the CPU variants build on,
// against double-precision libm over their whole range, and at the ends of it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "device/cpu/simd_math.h"

namespace wb {
namespace {

// Every 1/4096 between the ends of fast_exp's accurate range, and the values around 0.
TEST(CpuSimdMath, FastExpIsWithinTwoTenthsOfAMillionthRelative) {
  double worst = 0;
  float worst_x = 0;
  for (float x = -87.6f; x <= 88.3f; x += 1.0f / 4096) {
    const double exact = std::exp(double(x));
    const double rel = std::fabs(double(cpu::fast_exp(x)) - exact) / exact;
    if (rel > worst) worst = rel, worst_x = x;
  }
  EXPECT_LT(worst, 2e-7) << "at x = " << worst_x;
  EXPECT_EQ(cpu::fast_exp(0.0f), 1.0f);
  EXPECT_NEAR(cpu::fast_exp(1e-6f), 1.000001, 2e-7);
  EXPECT_NEAR(cpu::fast_exp(-1e-6f), 0.999999, 2e-7);
}

TEST(CpuSimdMath, FastExpEndsInZeroInfinityAndNan) {
  EXPECT_EQ(cpu::fast_exp(-87.7f), 0.0f);
  EXPECT_EQ(cpu::fast_exp(-1000.0f), 0.0f);
  EXPECT_EQ(cpu::fast_exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(cpu::fast_exp(88.4f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(cpu::fast_exp(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(cpu::fast_exp(std::numeric_limits<float>::quiet_NaN())));
  // Between -87.7 and -87.3 the true result is subnormal or nearly: finite, small, >= 0.
  for (float x = -87.7f; x <= -87.3f; x += 0.01f) {
    const float e = cpu::fast_exp(x);
    EXPECT_GE(e, 0.0f) << x;
    EXPECT_LT(e, 2e-38f) << x;
  }
}

// Both halves to full relative precision, over and beyond the range where sigmoid(z)
// itself rounds to 1 (there only the complement carries information).
TEST(CpuSimdMath, SigmoidPairIsAccurateOnBothSides) {
  double worst = 0;
  float worst_z = 0;
  for (float z = -80.0f; z <= 80.0f; z += 1.0f / 1024) {
    const double s = 1.0 / (1.0 + std::exp(-double(z)));
    const double c = 1.0 / (1.0 + std::exp(double(z)));
    const cpu::SigmoidPair p = cpu::sigmoid_pair(z);
    const double rel = std::max(std::fabs(p.sigmoid - s) / s, std::fabs(p.complement - c) / c);
    if (rel > worst) worst = rel, worst_z = z;
  }
  EXPECT_LT(worst, 4e-7) << "at z = " << worst_z;
  for (float z : {-1e30f, -1000.0f, 1000.0f, 1e30f, -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::infinity()}) {
    const cpu::SigmoidPair p = cpu::sigmoid_pair(z);
    EXPECT_FALSE(std::isnan(p.sigmoid) || std::isnan(p.complement)) << z;
    EXPECT_EQ(p.sigmoid + p.complement, 1.0f) << z;
  }
}

}  // namespace
}  // namespace wb
