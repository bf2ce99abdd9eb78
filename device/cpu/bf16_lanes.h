#pragma once
// bf16 conversions for the SIMD loops of the CPU rungs: the same values as to_float and
// to_bf16 of base/bf16.h, written as integer arithmetic without branches so that an
// `omp simd` loop keeps them in vector lanes (to_bf16's switch and early return keep a
// loop scalar).
//   widen(b)       the float whose upper half is b: exact, a shift
//   round_bits(f)  f rounded to nearest even, as bf16 bits: add 0x7FFF plus the lowest
//                  kept bit, drop the low half (the carry into the exponent is right, up
//                  to infinity); a NaN becomes CUDA's canonical 0x7FFF
//   widen_rows / round_rows  the same over a block of rows of n values, strided in the
//                  bf16 tensor (ld apart) and contiguous in the fp32 buffer
//   widen_all      a whole contiguous tensor, by an OpenMP team (the widening pass of
//                  the rungs that run bf16 products as fp32 sgemm)
// Both work on the bits as uint16_t/uint32_t: bf16 arrays are read as uint16_t through
// bits_of (bf16 is a struct of one uint16_t, standard layout).
#include <omp.h>

#include <cstdint>
#include <cstring>

#include "base/bf16.h"

namespace wb::cpu {

static_assert(sizeof(bf16) == sizeof(uint16_t) && alignof(bf16) == alignof(uint16_t),
              "a bf16 array is read as an array of its bits");

inline const uint16_t* bits_of(const bf16* p) { return reinterpret_cast<const uint16_t*>(p); }
inline uint16_t* bits_of(bf16* p) { return reinterpret_cast<uint16_t*>(p); }

[[gnu::always_inline]] inline float widen(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

[[gnu::always_inline]] inline uint16_t round_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  return (u & 0x7FFFFFFFu) > 0x7F800000u ? uint16_t(kBf16CanonicalNaN) : uint16_t(rounded);
}

// For loops templated on their storage, float or bf16 (read as its uint16_t bits):
//   lanes(p)         the elements as the loop reads them: float stays float, bf16 bits
//   widen(x)         the element as fp32 (a float is itself)
//   store(e, x)      e = x, on bf16 rounded once
//   add_into(e, x)   e += x, on bf16 rounded once from e widened plus x
inline const float* lanes(const float* p) { return p; }
inline float* lanes(float* p) { return p; }
inline const uint16_t* lanes(const bf16* p) { return bits_of(p); }
inline uint16_t* lanes(bf16* p) { return bits_of(p); }
[[gnu::always_inline]] inline float widen(float x) { return x; }
[[gnu::always_inline]] inline void store(float& e, float x) { e = x; }
[[gnu::always_inline]] inline void store(uint16_t& e, float x) { e = round_bits(x); }
[[gnu::always_inline]] inline void add_into(float& e, float x) { e += x; }
[[gnu::always_inline]] inline void add_into(uint16_t& e, float x) { e = round_bits(widen(e) + x); }

// to[r * n + i] = widen(from[r * ld + i]) for r < rows, i < n.
inline void widen_rows(const uint16_t* from, int64_t ld, float* to, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) to[r * n + i] = widen(from[r * ld + i]);
  }
}

// to[r * ld + i] = round_bits(from[r * n + i]) for r < rows, i < n.
inline void round_rows(const float* from, uint16_t* to, int64_t ld, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) to[r * ld + i] = round_bits(from[r * n + i]);
  }
}

// to[i] = widen(from[i]) for i < n, by `threads` OpenMP threads (0: OpenMP's default).
inline void widen_all(const bf16* from, float* to, int64_t n, int threads = 0) {
  const uint16_t* bits = bits_of(from);
#pragma omp parallel for simd num_threads(threads > 0 ? threads : omp_get_max_threads()) schedule(static)
  for (int64_t i = 0; i < n; ++i) to[i] = widen(bits[i]);
}

}  // namespace wb::cpu
