#pragma once
// What this CPU's instructions can do, asked once per process: the x86-64 extensions
// that CPUID reports and the operating system has enabled (XGETBV), summed up as the
// level that selects wb's rungs, and optionally capped below it by WB_CPU_ISA so that a
// machine with AVX-512 can run as one without it (CI's capped pass, tools/capped.sh).
//
// Why wb reads CPUID itself instead of GCC's __builtin_cpu_supports: the cap has to
// apply to every question asked (a rung's requirement, the device slug, oneDNN's
// dispatch), and AMX is beyond what GCC 12's builtin knows.
//
// The levels, lowest first, each including the one before:
//   sse2        the x86-64 baseline every such CPU has (what wb's build targets);
//   avx2        x86-64-v3: AVX, AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE;
//   avx512      x86-64-v4: AVX-512 F, BW, CD, DQ, VL;
//   avx512bf16  AVX512-BF16 (vdpbf16ps: bf16 pairs multiplied into fp32 lanes);
//   amx         AMX-TILE and AMX-BF16 (tile matrix multiplies).
// No rung of wb needs AMX today; it is a level because oneDNN dispatches to it.
#include <optional>
#include <string>
#include <string_view>

namespace wb::cpu {

enum class IsaLevel { sse2, avx2, avx512, avx512bf16, amx };

std::string_view to_string(IsaLevel level);  // "sse2", "avx2", ...
// The level a name gives, case-insensitively ("AVX2", "avx512bf16"); nullopt otherwise.
std::optional<IsaLevel> parse_isa_level(std::string_view name);
std::string isa_level_names();  // "sse2, avx2, avx512, avx512bf16, amx"

// The extensions wb asks about (each one usable: the CPU has it and the OS saves its
// registers).
struct IsaFeatures {
  bool sse42 = false;
  // x86-64-v3
  bool avx = false, avx2 = false, fma = false, f16c = false, bmi1 = false, bmi2 = false, lzcnt = false, movbe = false;
  // x86-64-v4
  bool avx512f = false, avx512bw = false, avx512cd = false, avx512dq = false, avx512vl = false;
  bool avx512vnni = false, avx512bf16 = false;
  bool amx_tile = false, amx_bf16 = false;
};

// The highest level whose extensions are all present.
IsaLevel level_of(const IsaFeatures& f);
// f without the extensions above `cap` (a cap at or above f's level changes nothing).
IsaFeatures capped(IsaFeatures f, IsaLevel cap);
// The extensions present, by name, the notable ones only: "AVX2, FMA, AVX-512 F/BW/CD/DQ/VL,
// AVX512-VNNI, AVX512-BF16"; "SSE2 only" (or "SSE2, SSE4.2") below AVX2.
std::string describe(const IsaFeatures& f);

// What CPUID and XGETBV report on this machine (all false off x86-64).
IsaFeatures detect_isa_features();

// This process's answer: the CPU's extensions, and those wb uses under WB_CPU_ISA.
struct Isa {
  IsaFeatures detected;  // the CPU's
  IsaFeatures features;  // what wb uses: the CPU's, capped
  IsaLevel detected_level = IsaLevel::sse2;
  IsaLevel level = IsaLevel::sse2;  // of `features`: the level that selects rungs
  std::optional<IsaLevel> cap;      // WB_CPU_ISA, when set and valid
  std::string cap_error;            // WB_CPU_ISA set to something that is not a level

  bool x86_64 = false;  // false: a build for another architecture, none of this applies
  bool capped_below_cpu() const { return cap && *cap < detected_level; }
  // "AVX2, FMA" or "AVX2, FMA (WB_CPU_ISA=avx2; the CPU has AVX2, FMA, AVX-512 ...)"
  std::string describe() const;
};

// Read once, at the first call; never throws (a bad WB_CPU_ISA is Isa::cap_error,
// which check_isa_cap turns into the program's error).
const Isa& isa();

// Throws wb::UsageError naming the legal values when WB_CPU_ISA is set to something
// else. wb and the trainer call it before any work, so a typo exits 2 instead of being
// taken for "no cap".
void check_isa_cap();

}  // namespace wb::cpu
