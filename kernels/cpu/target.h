#pragma once
// CPU variants compiled for x86-64-v3 (AVX2 and FMA: eight float lanes and fused
// multiply-adds) inside a build for the x86-64 baseline (SSE2: four lanes, no FMA).
// A function marked WB_TARGET_X86_64_V3 is compiled for x86-64-v3, with the inline
// functions it calls (fast_exp, ...) inlined into it and compiled the same way; such a
// variant declares x86_64_v3_missing() as its launch limit, so that a CPU without AVX2
// and FMA skips it, with the reason, instead of running an illegal instruction.
// No ifunc (GCC's target_clones): its resolver runs before ThreadSanitizer's runtime
// is up, and the sanitized builds of tools/emu_sanitized.sh compile these files too.
#include <optional>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#define WB_TARGET_X86_64_V3 __attribute__((target("arch=x86-64-v3")))
#else
#define WB_TARGET_X86_64_V3
#endif

// The same for AVX512-BF16 (`vdpbf16ps`: bf16 pairs multiplied and added into fp32
// lanes) and the AVX-512 subsets its code needs (F, BW, VL) with FMA. Only a
// function marked so may use the <immintrin.h> intrinsics of those extensions; its
// variant declares avx512bf16_missing() as its launch limit. WB_HAS_AVX512BF16_TARGET
// says whether this build can compile such a function at all.
#if defined(__x86_64__) && defined(__GNUC__)
#define WB_TARGET_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,fma")))
#define WB_HAS_AVX512BF16_TARGET 1
#else
#define WB_TARGET_AVX512BF16
#define WB_HAS_AVX512BF16_TARGET 0
#endif

namespace wb::cpu {

// Why this CPU cannot run code compiled for x86-64-v3; nullopt when it can.
inline std::optional<std::string> x86_64_v3_missing() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (has) return std::nullopt;
  return std::string("needs AVX2 and FMA (x86-64-v3), which this CPU lacks");
#else
  return std::string("compiled for x86-64-v3 (AVX2 and FMA) only, and this build targets another architecture");
#endif
}

// Why this CPU cannot run code compiled for WB_TARGET_AVX512BF16; nullopt when it can.
inline std::optional<std::string> avx512bf16_missing() {
#if WB_HAS_AVX512BF16_TARGET
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16") &&
                          __builtin_cpu_supports("fma");
  if (has) return std::nullopt;
  return std::string("needs AVX512-BF16 (vdpbf16ps) with AVX512F/BW/VL and FMA, which this CPU lacks");
#else
  return std::string("compiled for x86-64 with AVX512-BF16 only, and this build targets another architecture");
#endif
}

}  // namespace wb::cpu
