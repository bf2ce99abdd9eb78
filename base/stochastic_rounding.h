#pragma once
// Stochastic rounding of fp32 to bf16, reproducible run to run and the same on every
// backend: the CPU port, the emulator and a GPU round a given value of element i with
// a given seed to the same bf16.
//
// A value between two neighbouring bf16 a < |x| < b is rounded to b (away from zero)
// with probability (|x| - a) / (b - a) -- exactly the 16 bits a truncation drops, read
// as a fraction of 2^16 -- and to a otherwise, so the rounded value's expectation is x:
// small updates that round to nearest even would lose (an AdamW step far below half an
// ulp of the weight) survive on average. The random bits come from a counter-based
// hash of (element index, seed), not from a thread's index: the bits do not depend on
// the launch configuration, so every variant and block size agrees, and a resumed run
// rounds as the uninterrupted one did when it passes the same seed per step.
//   rounding_noise(index, seed)           32 random bits for element `index`
//   stochastic_round_bits(f_bits, noise)  the bf16 bits of the float with bits f_bits
// NaN becomes CUDA's canonical NaN (0x7FFF); infinities and values that are already
// bf16 stay as they are; the largest finite bf16 can round up to infinity (with the
// probability above), as rounding up does.
#include <cstdint>

#if defined(__CUDACC__)  // the emulator's device code is host code already
#define WB_HOST_DEVICE __host__ __device__
#else
#define WB_HOST_DEVICE
#endif

namespace wb {

// A 32-bit avalanche (every input bit flips each output bit with probability about
// one half): xor-shifts and odd multipliers, as in the finalisers of common hashes.
WB_HOST_DEVICE inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  x ^= x >> 16;
  return x;
}

WB_HOST_DEVICE inline uint32_t rounding_noise(uint64_t index, uint32_t seed) {
  return mix32(uint32_t(index) ^ mix32(uint32_t(index >> 32) ^ mix32(seed ^ 0x9E3779B9u)));
}

WB_HOST_DEVICE inline uint16_t stochastic_round_bits(uint32_t f_bits, uint32_t noise) {
  if ((f_bits & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;  // NaN
  const uint32_t dropped = f_bits & 0xFFFFu;
  // Adding one to the truncated bits steps the magnitude up by one ulp for either sign
  // (a carry into the exponent is the next binade, or infinity past the largest).
  return uint16_t((f_bits >> 16) + (dropped > (noise & 0xFFFFu) ? 1u : 0u));
}

}  // namespace wb
