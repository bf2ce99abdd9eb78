#include "contract/cpu_capabilities.h"

#include "base/cpu_isa.h"
#include "base/enum_names.h"

namespace wb::cpu {

namespace {
constexpr EnumNames<Capability, 3> kCapabilityNames = {{Capability::avx2_fma, "AVX2+FMA"},
                                                       {Capability::avx512bf16, "AVX512-BF16"},
                                                       {Capability::onednn_bf16_matmul, "oneDNN bf16 matmul"}};
}  // namespace

std::string_view name_of(Capability c) { return name_in(kCapabilityNames, c); }

std::optional<std::string> missing(Capability c) {
  const Isa& here = isa();
  switch (c) {
    case Capability::avx2_fma:
      if (!here.x86_64) return std::string("needs AVX2 and FMA (x86-64-v3): this build targets another architecture");
      if (here.level >= IsaLevel::avx2) return std::nullopt;
      return "needs AVX2 and FMA (x86-64-v3); this CPU has " + here.describe();
    case Capability::avx512bf16: {
      if (!here.x86_64) return std::string("needs AVX512-BF16: this build targets another architecture");
      const IsaFeatures& f = here.features;
      if (f.avx512bf16 && f.avx512f && f.avx512bw && f.avx512vl && f.fma) return std::nullopt;
      return "needs AVX512-BF16 (with AVX-512 F/BW/VL); this CPU has " + here.describe();
    }
    case Capability::onednn_bf16_matmul:
      return onednn_bf16_matmul_missing();
  }
  return std::nullopt;
}

Requirement needs(Capability c) {
  return Requirement{std::string(name_of(c)), [c](const Shape&) { return !missing(c); }};
}

std::optional<Capability> capability_of(const Requirement& r) {
  for (Capability c : {Capability::avx2_fma, Capability::avx512bf16, Capability::onednn_bf16_matmul})
    if (r.text == name_of(c)) return c;
  return std::nullopt;
}

std::optional<std::string> missing_capability(const Variant& v) {
  for (const Requirement& r : v.requirements)
    if (auto c = capability_of(r))
      if (auto why = missing(*c)) return why;
  return std::nullopt;
}

}  // namespace wb::cpu
