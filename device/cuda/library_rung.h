#pragma once
// The Variant of a rung built on a library the emulator does not have (cuBLASLt,
// cuDNN), declared in one place for all of them. Both builds: the emulator's reports
// such a rung as not emulated.
#include <string>
#include <utility>

#include "contract/types.h"
#include "contract/variant.h"

namespace wb::cuda {

// Variant::of(launch) where the GPU build passes its launcher; the emulator's build
// passes none (WB_DEVICE_ONLY, device/cuda/dialect.cuh), and the variant says it needs
// `library` (Variant::not_emulated), so that it is refused before the registry's stub
// would run. Args is given explicitly: a null launcher says nothing of it.
template <class Args>
Variant library_rung(void (*launch)(const Args&, const Launch&), const char* library, std::string summary,
                     NumericClass numeric = NumericClass::fp32) {
  Variant v = Variant::of<Args>(launch);
  v.summary = std::move(summary);
  v.numeric = numeric;
  v.not_emulated = std::string("needs ") + library;
  return v;
}

}  // namespace wb::cuda
