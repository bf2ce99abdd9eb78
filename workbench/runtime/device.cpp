// What a device can run at all, whatever the shape.
#include <cstdlib>

#include "contract/cpu_capabilities.h"
#include "contract/variant.h"
#include "workbench/runtime/executor.h"

namespace wb {

int compute_capability_number(const std::string& cc) {
  const auto dot = cc.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= cc.size()) return 0;
  return std::atoi(cc.substr(0, dot).c_str()) * 10 + std::atoi(cc.substr(dot + 1).c_str());
}

std::optional<std::string> cannot_run_on(const Variant& v, const DeviceInfo& d) {
  if (d.backend == Backend::emu && !v.not_emulated.empty()) return "not emulated: " + v.not_emulated;
  // What this CPU (as capped by WB_CPU_ISA) lacks: an instruction set, a library's
  // capability. The host runs the cpu backend, so the question is about this process's CPU.
  if (d.backend == Backend::cpu && v.backend == Backend::cpu)
    if (auto why = cpu::missing_capability(v)) return why;
  if (d.backend == Backend::cuda && v.min_compute_capability > compute_capability_number(d.compute_capability))
    return "needs compute capability " + std::to_string(v.min_compute_capability / 10) + "." +
           std::to_string(v.min_compute_capability % 10) + " or higher, this device has " + d.compute_capability;
  return std::nullopt;
}

}  // namespace wb
