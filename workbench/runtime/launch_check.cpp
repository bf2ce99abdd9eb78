#include "workbench/runtime/launch_check.h"

#include <cstdint>
#include <filesystem>

#include "contract/exec_context.h"
#include "emu/emu.h"
#include "emu/symbols.h"

namespace wb {
namespace {

// A context of its own for planning (the emulated library handles are made in it on
// first use): never the caller's, whose handles may be a GPU's.
ExecContext* planning_context() {
  static ExecContext ctx;
  return &ctx;
}

}  // namespace

// "/src/variants/x/common.cuh" -> "variants/x" (relative to the source tree).
std::string source_folder(const std::string& file) {
  std::filesystem::path p(file);
  const std::filesystem::path root(WB_SOURCE_DIR);
  std::error_code ec;
  const std::filesystem::path rel = std::filesystem::relative(p, root, ec);
  return (ec || rel.empty() ? p : rel).parent_path().string();
}

std::optional<std::vector<PlannedKernel>> plan_launches(const Registry& reg, const Variant& v, const Shape& shape,
                                                        const ParamValues& params, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<std::vector<PlannedKernel>> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (v.backend == Backend::cpu) return fail("a CPU variant launches no kernel");
  const Variant* twin = v.backend == Backend::cuda ? reg.find(v.op, Backend::emu, v.id) : &v;
  if (!twin) return fail("no emulated build of " + v.key());
  if (!twin->not_emulated.empty()) return fail("not emulated: " + twin->not_emulated);
  const OpSpec& op = reg.op(v.op);
  // Placeholder addresses, 256-byte aligned and far apart: nothing reads them.
  std::vector<void*> data;
  for (std::size_t i = 0; i < op.tensors.size(); ++i)
    data.push_back(reinterpret_cast<void*>((std::uintptr_t(1) << 40) + (std::uintptr_t(i) << 36)));
  const TensorTable table(op, shape, std::move(data));
  Launch launch;
  launch.params = v.complete(params);
  launch.workspace_bytes = v.workspace_bytes(shape, launch.params);
  launch.workspace = launch.workspace_bytes ? reinterpret_cast<void*>(std::uintptr_t(3) << 44) : nullptr;
  launch.ctx = planning_context();
  std::vector<PlannedKernel> kernels;
  try {
    emu::LaunchPlan plan;
    op.invoke(*twin, table, launch);
    for (const emu::PlannedLaunch& l : plan.launches()) {
      PlannedKernel k;
      if (const auto symbol = emu::kernel_symbol(l.kernel)) {
        k.name = symbol->name;
        k.unit = symbol->unit;
      } else {
        return fail("this program has no symbol table (stripped?): kernels cannot be named");
      }
      k.folder = source_folder(l.file);
      k.threads = int(uint64_t(l.block.x) * l.block.y * l.block.z);
      k.dynamic_shared = l.dynamic_shared;
      kernels.push_back(std::move(k));
    }
  } catch (const std::exception& e) {
    return fail(std::string("planning its launches failed: ") + e.what());
  }
  return kernels;
}

std::optional<std::string> cannot_launch(const Registry& reg, const Variant& v, const Shape& shape,
                                         const ParamValues& params, int cc) {
  if (v.backend == Backend::cpu || !compiled_kernels_known() || !launch_limits(cc)) return std::nullopt;
  // A stripped program cannot name its kernels: every configuration would pass this check
  // unchecked (the emulator would run launches a GPU refuses). Refuse to go on instead.
  if (!emu::have_symbol_table())
    throw std::runtime_error(
        "this program has no symbol table (was it stripped?), so the launch limits of its kernels cannot be "
        "checked before a launch; strip at most with `strip --strip-debug`, which keeps the symbol table");
  const auto kernels = plan_launches(reg, v, shape, params);
  if (!kernels) return std::nullopt;
  return launch_refusal(*kernels, cc);
}

}  // namespace wb
