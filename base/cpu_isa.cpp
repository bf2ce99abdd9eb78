#include "base/cpu_isa.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>

#include "base/errors.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#define WB_X86_64 1
#else
#define WB_X86_64 0
#endif

namespace wb::cpu {
namespace {

constexpr std::array<std::pair<IsaLevel, std::string_view>, 5> kLevels{{{IsaLevel::sse2, "sse2"},
                                                                        {IsaLevel::avx2, "avx2"},
                                                                        {IsaLevel::avx512, "avx512"},
                                                                        {IsaLevel::avx512bf16, "avx512bf16"},
                                                                        {IsaLevel::amx, "amx"}}};

#if WB_X86_64
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

// CPUID leaf/subleaf; all zero when the leaf is beyond what the CPU offers.
Regs cpuid(unsigned leaf, unsigned subleaf = 0) {
  Regs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.a, &r.b, &r.c, &r.d)) return Regs{};
  return r;
}

bool bit(unsigned reg, int n) { return (reg >> n) & 1u; }

// XCR0: the register state the OS saves on a context switch. An extension whose state
// it does not save cannot be used even when CPUID lists it (a kernel booted without
// AVX-512 support, a hypervisor that hides it).
uint64_t xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}
#endif

}  // namespace

std::string_view to_string(IsaLevel level) {
  for (const auto& [l, name] : kLevels)
    if (l == level) return name;
  return "?";
}

std::optional<IsaLevel> parse_isa_level(std::string_view name) {
  std::string lower;
  for (char c : name) lower += char(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [l, n] : kLevels)
    if (n == lower) return l;
  return std::nullopt;
}

std::string isa_level_names() {
  std::string out;
  for (const auto& [l, n] : kLevels) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

IsaLevel level_of(const IsaFeatures& f) {
  const bool v3 = f.avx && f.avx2 && f.fma && f.f16c && f.bmi1 && f.bmi2 && f.lzcnt && f.movbe;
  const bool v4 = v3 && f.avx512f && f.avx512bw && f.avx512cd && f.avx512dq && f.avx512vl;
  if (v4 && f.avx512bf16 && f.amx_tile && f.amx_bf16) return IsaLevel::amx;
  if (v4 && f.avx512bf16) return IsaLevel::avx512bf16;
  if (v4) return IsaLevel::avx512;
  if (v3) return IsaLevel::avx2;
  return IsaLevel::sse2;
}

IsaFeatures capped(IsaFeatures f, IsaLevel cap) {
  if (cap < IsaLevel::amx) f.amx_tile = f.amx_bf16 = false;
  if (cap < IsaLevel::avx512bf16) f.avx512bf16 = false;
  if (cap < IsaLevel::avx512) f.avx512f = f.avx512bw = f.avx512cd = f.avx512dq = f.avx512vl = f.avx512vnni = false;
  if (cap < IsaLevel::avx2) f.avx = f.avx2 = f.fma = f.f16c = f.bmi1 = f.bmi2 = f.lzcnt = f.movbe = false;
  return f;
}

std::string describe(const IsaFeatures& f) {
  std::string out;
  auto add = [&](bool has, const std::string& name) {
    if (has) out += (out.empty() ? "" : ", ") + name;
  };
  if (!f.avx2) {
    add(true, "SSE2");
    add(f.sse42, "SSE4.2");
    add(f.avx, "AVX");
    add(f.fma, "FMA");
    return out == "SSE2" ? "SSE2 only" : out;
  }
  add(true, "AVX2");
  add(f.fma, "FMA");
  std::string avx512;
  for (const auto& [has, name] :
       {std::pair{f.avx512f, "F"}, {f.avx512bw, "BW"}, {f.avx512cd, "CD"}, {f.avx512dq, "DQ"}, {f.avx512vl, "VL"}})
    if (has) avx512 += (avx512.empty() ? "" : "/") + std::string(name);
  add(!avx512.empty(), "AVX-512 " + avx512);
  add(f.avx512vnni, "AVX512-VNNI");
  add(f.avx512bf16, "AVX512-BF16");
  add(f.amx_tile, "AMX-TILE");
  add(f.amx_bf16, "AMX-BF16");
  return out;
}

IsaFeatures detect_isa_features() {
  IsaFeatures f;
#if WB_X86_64
  const Regs l1 = cpuid(1);
  const bool osxsave = bit(l1.c, 27);
  const uint64_t xcr = osxsave ? xcr0() : 0;
  const bool avx_state = (xcr & 0x6) == 0x6;                    // XMM and YMM
  const bool avx512_state = avx_state && (xcr & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool amx_state = (xcr & 0x60000) == 0x60000;            // XTILECFG, XTILEDATA
  const Regs l7 = cpuid(7, 0);
  const Regs l7s1 = cpuid(7, 1);
  const Regs ext = cpuid(0x80000001);
  f.sse42 = bit(l1.c, 20);
  f.avx = avx_state && bit(l1.c, 28);
  f.fma = avx_state && bit(l1.c, 12);
  f.f16c = avx_state && bit(l1.c, 29);
  f.movbe = bit(l1.c, 22);
  f.avx2 = avx_state && bit(l7.b, 5);
  f.bmi1 = bit(l7.b, 3);
  f.bmi2 = bit(l7.b, 8);
  f.lzcnt = bit(ext.c, 5);
  f.avx512f = avx512_state && bit(l7.b, 16);
  f.avx512dq = avx512_state && bit(l7.b, 17);
  f.avx512cd = avx512_state && bit(l7.b, 28);
  f.avx512bw = avx512_state && bit(l7.b, 30);
  f.avx512vl = avx512_state && bit(l7.b, 31);
  f.avx512vnni = avx512_state && bit(l7.c, 11);
  f.avx512bf16 = avx512_state && bit(l7s1.a, 5);
  f.amx_bf16 = amx_state && bit(l7.d, 22);
  f.amx_tile = amx_state && bit(l7.d, 24);
#endif
  return f;
}

std::string Isa::describe() const {
  const std::string used = cpu::describe(features);
  if (!cap) return used;
  const std::string setting = "WB_CPU_ISA=" + std::string(to_string(*cap));
  if (!capped_below_cpu()) return used + " (" + setting + ": at or above the CPU's level, no cap)";
  return used + " (capped by " + setting + "; the CPU has " + cpu::describe(detected) + ")";
}

const Isa& isa() {
  static const Isa instance = [] {
    Isa i;
    i.x86_64 = WB_X86_64;
    i.detected = detect_isa_features();
    i.detected_level = level_of(i.detected);
    i.features = i.detected;
    if (const char* env = std::getenv("WB_CPU_ISA"); env && *env) {
      i.cap = parse_isa_level(env);
      if (!i.cap) i.cap_error = std::string("WB_CPU_ISA is '") + env + "', not one of " + isa_level_names();
    }
    if (i.cap) i.features = capped(i.detected, *i.cap);
    i.level = level_of(i.features);
    return i;
  }();
  return instance;
}

void check_isa_cap() {
  if (!isa().cap_error.empty()) throw UsageError(isa().cap_error + " (unset it to use all of this CPU's)");
}

}  // namespace wb::cpu
