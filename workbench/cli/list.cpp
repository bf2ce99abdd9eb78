// wb list [OP]: the catalogue and its variants.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "contract/cpu_capabilities.h"
#include "contract/registry_table.h"
#include "device/triton/cubins.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/list_verification.h"
#include "workbench/runtime/context.h"
#include "workbench/runtime/table.h"

namespace wb::cli {
namespace {

// "runs here", or "skipped here: needs AVX512-BF16": the capabilities this CPU (as
// capped by WB_CPU_ISA) lacks, whatever the shape (wb run and wb device say why in
// full: what this CPU has, the cap, oneDNN's answer).
std::string cpu_status(const Variant& v) {
  std::string lacks;
  for (const Requirement& r : v.requirements)
    if (auto c = cpu::capability_of(r); c && cpu::missing(*c)) lacks += (lacks.empty() ? "" : ", ") + r.text;
  return lacks.empty() ? "runs here" : "skipped here: needs " + lacks;
}

// The "requires" column: the requirements on the shape, then "launch_limit" when the
// variant also refuses some configurations at some shapes (Variant::launch_limit: a
// row too long for a tile's registers), which `wb check` reports as skipped with the
// reason; a user reading the column learns that a skip there is stated, not a bug.
std::string requires_text(const Variant& v) {
  if (!v.launch_limit) return v.requirements_text();
  return v.requirements.empty() ? "launch_limit" : v.requirements_text() + ", launch_limit";
}

struct ListOptions {
  std::string op;
  std::string results_dir = default_results_dir();
};

int list(const ListOptions& o) {
  const Registry& reg = registry();
  std::vector<const OpSpec*> ops = reg.ops();
  if (!o.op.empty()) ops = {&reg.op(o.op)};
  const VerificationIndex verified = VerificationIndex::scan(o.results_dir);
  for (const auto& w : verified.warnings()) std::cerr << "wb: warning: " << w << "\n";

  for (const OpSpec* op : ops) {
    std::string dims;
    for (const auto& d : op->dims) dims += (dims.empty() ? "" : " ") + d;
    std::cout << op->name << "  [" << dims << "]  " << op->storage() << " storage"
              << (op->fp32_twin.empty() ? "" : ", checked against " + op->fp32_twin + "'s reference on widened inputs")
              << (op->own_truth.empty() ? "" : ", checked against its own truth (no fp32 twin: " + op->own_truth + ")")
              << "\n  " << op->summary << "\n";
    if (!o.op.empty()) {
      for (const auto& t : op->tensors)
        std::cout << "    " << to_string(t.role) << " " << t.name << " " << t.extents_text() << " "
                  << to_string(t.dtype)
                  << (t.role == Role::output  ? "  (overwritten)"
                      : t.role == Role::inout ? "  (accumulated or updated in place)"
                                              : "")
                  << (t.optional ? "  (may be null)" : "") << "\n";
      for (const auto& s : op->scalars) std::cout << "    scalar " << s.name << ": " << s.doc << "\n";
    }
    // A CPU variant's "on a device" is this CPU; a CUDA variant's, what a committed
    // report verified.
    TextTable table(
        {"backend", "id", "name", "storage", "class", "launch", "requires", "on a device", "in emulation", "summary"});
    for (const Variant* v : reg.variants(op->name)) {
      // A CUDA variant is one row, whether this build compiled it for a GPU, for the
      // emulator, or both (the emulated copy is the same source).
      if (v->backend == Backend::emu && reg.find(v->op, Backend::cuda, v->id)) continue;
      const bool gpu_code = v->backend != Backend::cpu;
      table.add({gpu_code ? "cuda" : "cpu", std::to_string(v->id), v->name, op->storage(),
                 std::string(to_string(v->numeric)), v->params_text(), requires_text(*v),
                 gpu_code            ? verified.status(*v).text()
                 : is_torch_rung(*v) ? "with the venv's PyTorch"
                                     : cpu_status(*v),
                 gpu_code && !is_torch_rung(*v) ? verified.emulation(*v).text() : "-", v->summary});
    }
    table.print(std::cout, "  ");
    // The Triton rungs' kernels and the cubins this build carries for them.
    for (const Variant* v : reg.variants(op->name, Backend::cuda))
      if (is_triton_rung(*v))
        if (const triton::CubinTable* cubins = triton::cubins_of(v->source))
          std::cout << "  cuda/" << v->id << " " << v->name << ": Triton kernel " << triton::describe(*cubins) << "\n";
    // The PyTorch rungs' file, and what they need.
    for (const TorchRungFile& f : torch_rung_files())
      if (f.op == op->name)
        std::cout << "  " << kTorchEagerId << ", " << kTorchCompileId << ": PyTorch rungs of " << f.source
                  << ", eager and torch.compile, run by PyTorch in its own process (Python at run time: compared, "
                     "never the trainer's; docs/torch.md)\n";
    // Triton rungs this build left out (docs/triton.md): named, with why, so that a
    // missing rung is never silent.
    for (const SkippedRung& r : skipped_triton_rungs())
      if (parse_variant_file(r.source).op == op->name)
        std::cout << "  not built: " << r.source << " (a Triton rung): " << r.why << "\n";
    std::cout << "\n";
  }
#if !WB_HAVE_CUDA
  std::cout << "This wb was built without CUDA (nvcc was not found when it was configured): the cuda variants "
               "run in emulation only (--backend emu).\n";
#endif
  return kOk;
}

void add_options(CLI::App& cmd, ListOptions& o) {
  cmd.add_option("op", o.op, "only this op");
  cmd.add_option("--results", o.results_dir, "folder of committed reports, for the verification status")
      ->capture_default_str();
}

}  // namespace

Command add_list_command(CLI::App& app) {
  return new_command(
      app, "list", "ops and their variants: backend, id, name, numeric class, block sizes, requirements, verification",
      add_options, list);
}

}  // namespace wb::cli
