#pragma once
// bf16 ("brain float 16"): the upper half of an IEEE-754 binary32 -- sign, the same
// 8-bit exponent, 7 bits of mantissa. wb's own type for host code (CPU variants,
// references, input generation, checks, files), with CUDA's conversions bit for bit
// (cuda_bf16.hpp and the cvt.*.bf16.f32 instructions), so that a value rounded on the
// host, in the emulator (kernels/emu/include/cuda_bf16.h, built on these functions)
// and on a GPU is the same bf16:
//   to_bf16 (= _rn)  round to nearest, ties to even   __float2bfloat16, __float2bfloat16_rn
//   to_bf16_rz       toward zero (truncation)          __float2bfloat16_rz
//   to_bf16_rd       toward -infinity                  __float2bfloat16_rd
//   to_bf16_ru       toward +infinity                  __float2bfloat16_ru
//   to_float         exact (the bits shifted up)       __bfloat162float
// A NaN converts to CUDA's canonical NaN, 0x7FFF, whatever its sign and payload (PyTorch
// keeps the sign and the top of the payload: compare NaNs by class, not by bits).
// Subnormals are kept (no flush to zero); values past the largest bf16 round to
// infinity where the rounding direction says so.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace wb {

struct bf16 {
  uint16_t bits = 0;
  static constexpr bf16 from_bits(uint16_t b) {
    bf16 x;
    x.bits = b;
    return x;
  }
  friend constexpr bool operator==(bf16 a, bf16 b) { return a.bits == b.bits; }
  friend constexpr bool operator!=(bf16 a, bf16 b) { return a.bits != b.bits; }
};
static_assert(sizeof(bf16) == 2, "bf16 is two bytes: tensors of it are arrays of uint16");

inline constexpr uint16_t kBf16CanonicalNaN = 0x7FFF;

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float to_float(bf16 x) { return float_from_bits(uint32_t(x.bits) << 16); }

inline bool is_nan(bf16 x) { return (x.bits & 0x7FFF) > 0x7F80; }

namespace detail {

enum class Rounding { nearest_even, toward_zero, down, up };

inline bf16 round_to_bf16(float f, Rounding mode) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return bf16::from_bits(kBf16CanonicalNaN);
  const uint16_t truncated = uint16_t(u >> 16);
  const uint32_t rest = u & 0xFFFFu;  // the bits that do not fit
  const bool negative = (u >> 31) != 0;
  bool away = false;  // one ulp further from zero than the truncation
  switch (mode) {
    case Rounding::nearest_even:
      away = rest > 0x8000u || (rest == 0x8000u && (truncated & 1u));
      break;
    case Rounding::toward_zero:
      break;
    case Rounding::down:
      away = rest != 0 && negative;
      break;
    case Rounding::up:
      away = rest != 0 && !negative;
      break;
  }
  // One ulp away from zero in magnitude: the carry into the exponent is right, up to
  // infinity (0x7F80) from the largest finite value.
  return bf16::from_bits(uint16_t(truncated + (away ? 1 : 0)));
}

}  // namespace detail

inline bf16 to_bf16(float f) { return detail::round_to_bf16(f, detail::Rounding::nearest_even); }
inline bf16 to_bf16_rz(float f) { return detail::round_to_bf16(f, detail::Rounding::toward_zero); }
inline bf16 to_bf16_rd(float f) { return detail::round_to_bf16(f, detail::Rounding::down); }
inline bf16 to_bf16_ru(float f) { return detail::round_to_bf16(f, detail::Rounding::up); }

// A double rounded once to bf16, to nearest even: what a fused operation on bf16
// values (__hfma2: a * b + c with one rounding) gives when a * b + c is exact in
// double. Rounding the double to float first would round twice.
inline bf16 to_bf16(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  if ((u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) return bf16::from_bits(kBf16CanonicalNaN);
  // float keeps the double exactly when its low 29 mantissa bits are zero and it is in
  // float's normal range; then one rounding of the float is the rounding of the double.
  const float f = float(d);
  if (double(f) == d) return to_bf16(f);
  // Otherwise: truncate toward zero to float (no rounding up there), then the bits
  // below bf16 plus a sticky bit for everything the truncation dropped decide.
  float t = f;
  if ((d > 0 && double(t) > d) || (d < 0 && double(t) < d)) t = std::nextafter(t, 0.0f);
  uint32_t bits = float_bits(t) | 1u;  // sticky: d lies strictly between t and the next float
  return to_bf16(float_from_bits(bits));
}

}  // namespace wb
