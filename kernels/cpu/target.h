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

}  // namespace wb::cpu
