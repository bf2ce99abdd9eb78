#include "tests/planted/planted.h"

namespace wb::testing {

const Registry& planted_registry() {
  static const Registry registry = [] {
    Registry r = Registry::global();
    for (Variant v : planted_cpu_variants()) r.add(std::move(v));
    for (Variant v : planted_emu_variants()) {
      v.backend = Backend::emu;  // the CUDA source, emulated
      r.add(std::move(v));
    }
    for (Variant v : planted_triton_variants()) r.add(std::move(v));
    for (Variant v : planted_torch_variants()) r.add(std::move(v));
#if WB_HAVE_CUDA
    for (Variant v : planted_cuda_variants()) r.add(std::move(v));
#endif
    return r;
  }();
  return registry;
}

}  // namespace wb::testing
