#pragma once
// What a CPU rung needs beyond the x86-64 baseline wb's build targets: an instruction
// set (a function compiled for it, device/cpu/target.h) or a library capability
// (oneDNN's bf16 matmul). A rung states it as one of its requirements,
//   v.requirements = {cpu::needs(cpu::Capability::avx512bf16)};
// so that `wb list` prints it beside its shape requirements, and every "can it run
// here?" question (can_run.h: wb run/check/sweep and the trainer's plan) refuses it on a
// CPU without it, as a skip with the reason, before anything runs: an illegal
// instruction or a library's refusal never reaches the process.
//
// The answers follow the capped CPU (base/cpu_isa.h): under WB_CPU_ISA=avx2 a rung
// that needs AVX512-BF16 is skipped on a CPU that has it.
#include <optional>
#include <string>
#include <string_view>

#include "contract/variant.h"

namespace wb::cpu {

enum class Capability {
  avx2_fma,            // x86-64-v3: a function marked WB_TARGET_X86_64_V3
  avx512bf16,          // AVX512-BF16 with AVX-512 F/BW/VL and FMA: WB_TARGET_AVX512BF16
  onednn_bf16_matmul,  // oneDNN builds a bf16 matmul primitive here (device/cpu/onednn.h)
};

// The requirement's text, as wb list prints it: "AVX2+FMA", "AVX512-BF16",
// "oneDNN bf16 matmul".
std::string_view name_of(Capability c);

// Why this CPU (as capped) lacks c, or nullopt when it has it: "needs AVX512-BF16 (with
// AVX-512 F/BW/VL); this CPU has AVX2, FMA".
std::optional<std::string> missing(Capability c);

// The requirement a rung states.
Requirement needs(Capability c);

// The capability a requirement states, or nullopt for a shape requirement.
std::optional<Capability> capability_of(const Requirement& r);

// Why this CPU lacks one of v's capabilities (the first, in v's order), or nullopt.
std::optional<std::string> missing_capability(const Variant& v);

// Why oneDNN cannot build a bf16 matmul here, or nullopt when it can. Defined beside the
// oneDNN plumbing (device/cpu/onednn.cpp), which asks the library: the contract states
// the requirement, the device room answers it.
std::optional<std::string> onednn_bf16_matmul_missing();

}  // namespace wb::cpu
