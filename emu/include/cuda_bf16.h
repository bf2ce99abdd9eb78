#pragma once
// The emulator's stand-in for CUDA's cuda_bf16.h: __nv_bfloat16 and __nv_bfloat162 with
// CUDA's semantics bit for bit, built on wb's own conversions (base/bf16.h).
//   conversions   __float2bfloat16 (and _rn, _rz, _rd, _ru), __bfloat162float,
//                 __float2bfloat162_rn, __floats2bfloat162_rn, __float22bfloat162_rn,
//                 __bfloat1622float2, __low2float, __high2float, __low2bfloat16,
//                 __high2bfloat16, __halves2bfloat162, __bfloat162bfloat162,
//                 make_bfloat162, __bfloat16_as_ushort, __ushort_as_bfloat16
//   arithmetic    __hadd, __hsub, __hmul, __hfma, __hneg, __habs, __hmax, __hmin and
//                 their two-lane forms (__hadd2, ..., __hfma2), operators + - * on
//                 __nv_bfloat16 and the compound assignments
// Every operation is computed exactly (in double: the product of two bf16 has 16
// significant bits) and rounded once to nearest even, as the sm_80 instructions
// (add.rn.bf16, fma.rn.bf16) do; __hfma's a * b + c is exact in double unless c and
// a * b lie more than 2^36 apart, when the smaller cannot reach half an ulp of the
// larger anyway. A NaN result is the canonical 0x7FFF.
//
// Defined in wb::emu_build (emu/shim.h says why): variants reach them by the
// usual names from inside namespace wb.
#include <cstdint>
#include <type_traits>

#include "base/bf16.h"
#include "emu/shim.h"

namespace wb {
inline namespace emu_build {

struct __nv_bfloat16 {
  uint16_t __x;  // no initialiser: trivially constructible, as CUDA's (packed arrays of it are memcpy'd)
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : __x(::wb::to_bf16(f).bits) {}  // round to nearest even, as CUDA's
  __nv_bfloat16(double d) : __x(::wb::to_bf16(d).bits) {}
  operator float() const { return ::wb::to_float(::wb::bf16::from_bits(__x)); }
  static __nv_bfloat16 raw(uint16_t bits) {
    __nv_bfloat16 h;
    h.__x = bits;
    return h;
  }
};
static_assert(sizeof(__nv_bfloat16) == 2, "a bf16 is two bytes");
static_assert(std::is_trivially_copyable_v<__nv_bfloat16> && std::is_trivially_default_constructible_v<__nv_bfloat16>,
              "as CUDA's: copied and packed by memcpy");

struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
static_assert(sizeof(__nv_bfloat162) == 4, "two bf16 are four bytes");

using nv_bfloat16 = __nv_bfloat16;
using nv_bfloat162 = __nv_bfloat162;

// ---------------------------------------------------------------------------------
// Conversions

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16::raw(::wb::to_bf16(f).bits); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16::raw(::wb::to_bf16(f).bits); }
inline __nv_bfloat16 __float2bfloat16_rz(float f) { return __nv_bfloat16::raw(::wb::to_bf16_rz(f).bits); }
inline __nv_bfloat16 __float2bfloat16_rd(float f) { return __nv_bfloat16::raw(::wb::to_bf16_rd(f).bits); }
inline __nv_bfloat16 __float2bfloat16_ru(float f) { return __nv_bfloat16::raw(::wb::to_bf16_ru(f).bits); }
inline float __bfloat162float(__nv_bfloat16 h) { return float(h); }

inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return {a, b}; }
inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return {a, b}; }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return {a, a}; }
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return {__float2bfloat16(f), __float2bfloat16(f)}; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__float2bfloat16(a), __float2bfloat16(b)}; }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return {__float2bfloat16(f.x), __float2bfloat16(f.y)}; }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return {float(h.x), float(h.y)}; }
inline float __low2float(__nv_bfloat162 h) { return float(h.x); }
inline float __high2float(__nv_bfloat162 h) { return float(h.y); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __nv_bfloat16::raw(u); }

// ---------------------------------------------------------------------------------
// Arithmetic: exact in double, one rounding to nearest even

namespace bf16_detail {
inline double wide(__nv_bfloat16 h) { return double(float(h)); }
inline __nv_bfloat16 narrow(double d) { return __nv_bfloat16::raw(::wb::to_bf16(d).bits); }
}  // namespace bf16_detail

inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) {
  return bf16_detail::narrow(bf16_detail::wide(a) + bf16_detail::wide(b));
}
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) {
  return bf16_detail::narrow(bf16_detail::wide(a) - bf16_detail::wide(b));
}
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) {
  return bf16_detail::narrow(bf16_detail::wide(a) * bf16_detail::wide(b));
}
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return bf16_detail::narrow(bf16_detail::wide(a) * bf16_detail::wide(b) + bf16_detail::wide(c));
}
inline __nv_bfloat16 __hneg(__nv_bfloat16 a) { return __nv_bfloat16::raw(uint16_t(a.__x ^ 0x8000u)); }
inline __nv_bfloat16 __habs(__nv_bfloat16 a) { return __nv_bfloat16::raw(uint16_t(a.__x & 0x7FFFu)); }
// max and min of a NaN and a number give the number (PTX max.bf16 / min.bf16).
inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) {
  if (::wb::is_nan(::wb::bf16::from_bits(a.__x))) return ::wb::is_nan(::wb::bf16::from_bits(b.__x)) ? __nv_bfloat16::raw(::wb::kBf16CanonicalNaN) : b;
  if (::wb::is_nan(::wb::bf16::from_bits(b.__x))) return a;
  return float(a) < float(b) ? b : a;
}
inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) {
  if (::wb::is_nan(::wb::bf16::from_bits(a.__x))) return ::wb::is_nan(::wb::bf16::from_bits(b.__x)) ? __nv_bfloat16::raw(::wb::kBf16CanonicalNaN) : b;
  if (::wb::is_nan(::wb::bf16::from_bits(b.__x))) return a;
  return float(b) < float(a) ? b : a;
}

inline __nv_bfloat162 __hadd2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hadd(a.x, b.x), __hadd(a.y, b.y)}; }
inline __nv_bfloat162 __hsub2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hsub(a.x, b.x), __hsub(a.y, b.y)}; }
inline __nv_bfloat162 __hmul2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hmul(a.x, b.x), __hmul(a.y, b.y)}; }
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
inline __nv_bfloat162 __hneg2(__nv_bfloat162 a) { return {__hneg(a.x), __hneg(a.y)}; }
inline __nv_bfloat162 __hmax2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hmax(a.x, b.x), __hmax(a.y, b.y)}; }
inline __nv_bfloat162 __hmin2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hmin(a.x, b.x), __hmin(a.y, b.y)}; }

inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }
inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a) { return __hneg(a); }
inline __nv_bfloat16& operator+=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hadd(a, b); }
inline __nv_bfloat16& operator-=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hsub(a, b); }
inline __nv_bfloat16& operator*=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hmul(a, b); }
inline __nv_bfloat162 operator+(__nv_bfloat162 a, __nv_bfloat162 b) { return __hadd2(a, b); }
inline __nv_bfloat162 operator-(__nv_bfloat162 a, __nv_bfloat162 b) { return __hsub2(a, b); }
inline __nv_bfloat162 operator*(__nv_bfloat162 a, __nv_bfloat162 b) { return __hmul2(a, b); }

}  // namespace emu_build
}  // namespace wb
