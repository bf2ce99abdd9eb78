#pragma once
// CPU variants compiled for x86-64-v3 (AVX2 and FMA: eight float lanes and fused
// multiply-adds) inside a build for the x86-64 baseline (SSE2: four lanes, no FMA).
// A function marked WB_TARGET_X86_64_V3 is compiled for x86-64-v3, with the inline
// functions it calls (fast_exp, ...) inlined into it and compiled the same way; such a
// variant states cpu::needs(Capability::avx2_fma) among its requirements
// (contract/cpu_capabilities.h), so that a CPU without AVX2
// and FMA skips it, with the reason, instead of running an illegal instruction.
// This is also why wb's build has no -march or other global instruction-set flag
// (the isa_flags test checks the compile commands): its binaries run on any x86-64 CPU, and
// the GPU campaign's bundle, built here, runs on another host's.
// No ifunc (GCC's target_clones): its resolver runs before ThreadSanitizer's runtime
// is up, and the sanitized builds of ci/emu_sanitized.sh compile these files too.
#include <optional>
#include <string>
#include <utility>

#include "contract/cpu_capabilities.h"
#include "device/cpu/threads.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define WB_TARGET_X86_64_V3 __attribute__((target("arch=x86-64-v3")))
#else
#define WB_TARGET_X86_64_V3
#endif

// The same for AVX512-BF16 (`vdpbf16ps`: bf16 pairs multiplied and added into fp32
// lanes) and the AVX-512 subsets its code needs (F, BW, VL) with FMA. Only a
// function marked so may use the <immintrin.h> intrinsics of those extensions; its
// variant states cpu::needs(Capability::avx512bf16). WB_HAS_AVX512BF16_TARGET
// says whether this build can compile such a function at all.
#if defined(__x86_64__) && defined(__GNUC__)
#define WB_TARGET_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,fma")))
#define WB_HAS_AVX512BF16_TARGET 1
#else
#define WB_TARGET_AVX512BF16
#define WB_HAS_AVX512BF16_TARGET 0
#endif

namespace wb::cpu {

// Why this CPU (as capped by WB_CPU_ISA) cannot run code compiled for x86-64-v3;
// nullopt when it can. A rung states the need as cpu::needs(Capability::avx2_fma)
// (contract/cpu_capabilities.h); code that picks a path at run time asks this.
inline std::optional<std::string> x86_64_v3_missing() { return missing(Capability::avx2_fma); }

// The description of a threaded rung whose row or block is compiled for x86-64-v3:
// threaded()'s, with AVX2 and FMA as its requirement, so that no such rung can leave
// it out and run an illegal instruction on an older CPU.
template <class Args>
Variant threaded_x86_64_v3(void (*run)(const Args&, const Launch&), std::string summary) {
  Variant v = threaded(run, std::move(summary));
  v.requirements = {needs(Capability::avx2_fma)};
  return v;
}

// Why this CPU (as capped) cannot run code compiled for WB_TARGET_AVX512BF16; nullopt
// when it can.
inline std::optional<std::string> avx512bf16_missing() { return missing(Capability::avx512bf16); }

}  // namespace wb::cpu
