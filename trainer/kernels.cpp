#include "trainer/kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "kernels/errors.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/table.h"

namespace wb::trainer {
namespace {

// Why v cannot run on this backend at all (the emulator cannot run what needs cuDNN,
// cuBLASLt or tensor cores); "" when it can.
std::string cannot_run_here(const Variant& v, Backend b) {
  return b == Backend::emu && !v.not_emulated.empty() ? "not emulated: " + v.not_emulated : "";
}

// The highest id of an allowed numeric class that can run the shape with its defaults.
const Variant* default_variant(const Registry& reg, const std::string& op, Backend b, NumericClass precision,
                               const Shape& shape) {
  auto variants = reg.variants(op, b);
  for (auto it = variants.rbegin(); it != variants.rend(); ++it) {
    const Variant* v = *it;
    if (allowed_in(v->numeric, precision) && cannot_run_here(*v, b).empty() &&
        !v->skip_reason(shape, v->default_params()))
      return v;
  }
  return nullptr;
}

std::string at_shape(const OpSpec& op, const Shape& s) { return op.name + " at " + op.describe_shape(s); }

}  // namespace

std::string why_the_step_skips(const std::string& op) {
  if (op == "residual_forward")
    return "the step runs fused_residual_layernorm_forward, which adds the residual itself";
  if (op == "softmax_forward" || op == "crossentropy_forward" || op == "crossentropy_softmax_backward")
    return "the step runs fused_classifier (softmax, loss and its gradient in one op) instead";
  return "";
}

KernelPlan::KernelPlan(const Registry& reg, Executor& ex, NumericClass precision, const BestFile* best,
                       const std::vector<Workload>& workloads, std::ostream& notices)
    : ex_(ex) {
  const Backend backend = ex.backend();
  // The emulator runs a CUDA device's choices: the same variant ids, emulated.
  const bool emulating_cuda = backend == Backend::emu && best && best->backend == Backend::cuda;
  if (emulating_cuda)
    notices << "notice: emulating the CUDA kernels chosen on " << best->device_name << " (the same variants, run by "
            << "the emulator)\n";
  if (best && !emulating_cuda) {
    if (best->backend != backend)
      throw UsageError("the kernels file is for the " + std::string(to_string(best->backend)) +
                       " backend, this trainer runs " + std::string(to_string(backend)));
    if (best->device_name != ex.device().name)
      throw UsageError("the kernels file was measured on " + best->device_name + ", this trainer runs on " +
                       ex.device().name + "; make one for this device with wb sweep and wb best");
    for (const auto& e : best->entries) {
      reg.op(e.op);                                                  // unknown op: UsageError
      reg.variant(e.op, backend, e.variant).check_params(e.params);  // unknown variant or params: UsageError
    }
  }

  std::size_t workspace = 0;
  std::map<const BestEntry*, std::string> rejected;  // entries tried and refused, and why
  for (const Workload& w : workloads) {
    Selection s;
    s.op = &reg.op(w.op);
    s.shape = w.shape;
    s.calls = w.calls;
    const std::string where = at_shape(*s.op, w.shape);
    if (best) {
      const BestEntry* e = best->find(w.op, w.shape);
      std::string why;
      if (!e) {
        for (const auto& other : best->entries)
          if (other.op == w.op && !e) e = &other;
        if (e) why = " (chosen at " + e->shape_text() + ")";
      }
      if (e) {
        const Variant& v = reg.variant(e->op, backend, e->variant);
        const ParamValues params = v.complete(e->params);
        if (const std::string why_not = cannot_run_here(v, backend); !why_not.empty()) {
          notices << "warning: " << where << ": best.json names " << v.label() << ", which this backend cannot run ("
                  << why_not << "); using the default\n";
          rejected[e] = v.label() + ": " + why_not;
        } else if (!allowed_in(v.numeric, precision)) {
          notices << "notice: " << where << ": best.json names " << v.label() << " of class " << to_string(v.numeric)
                  << ", not allowed at precision " << to_string(precision) << "; using the default\n";
          rejected[e] = "class " + std::string(to_string(v.numeric)) + " is not allowed at precision " +
                        std::string(to_string(precision));
        } else if (auto reason = v.skip_reason(w.shape, params)) {
          notices << "warning: " << where << ": best.json names " << v.label() << ", which cannot run it (" << *reason
                  << "); using the default\n";
          rejected[e] = v.label() + " cannot run " + s.op->describe_shape(w.shape) + ": " + *reason;
        } else {
          s.variant = &v;
          s.params = params;
          s.entry = e;
          s.origin = "best.json" + why;
        }
      } else {
        notices << "notice: " << where << " is not in best.json; using the default\n";
      }
    }
    if (!s.variant) {
      s.variant = default_variant(reg, w.op, backend, precision, w.shape);
      if (!s.variant)
        throw UsageError("no " + std::string(to_string(backend)) + " variant of class " +
                         std::string(to_string(precision)) + " or narrower can run " + where);
      s.params = s.variant->default_params();
      s.origin = best ? "default (fallback)" : "default";
    }
    workspace = std::max(workspace, s.variant->workspace_bytes(w.shape, s.params));
    selections_.push_back(s);
  }
  workspace_ = Buffer(ex, workspace);

  if (best) {
    for (const BestEntry& e : best->entries) {
      const bool used = std::any_of(selections_.begin(), selections_.end(),
                                    [&](const Selection& sel) { return sel.entry == &e; });
      if (used) continue;
      std::string reason = why_the_step_skips(e.op);
      if (reason.empty() && rejected.count(&e)) reason = rejected[&e];
      if (reason.empty()) {
        const bool runs_op = std::any_of(workloads.begin(), workloads.end(), [&](const Workload& w) { return w.op == e.op; });
        reason = runs_op ? "measured at " + e.shape_text() + ", a shape this run does not call (and its other calls " +
                               "have entries of their own)"
                         : "this step does not run " + e.op;
      }
      unused_.push_back({&e, reason});
    }
  }
}

const Selection& KernelPlan::at(const std::string& op, const Shape& shape) const {
  for (const auto& s : selections_)
    if (s.op->name == op && same_dims(s.shape, shape, s.op->dims)) return s;
  throw std::logic_error("the kernel plan has no entry for " + op + " at this shape");
}

void KernelPlan::print_unused(std::ostream& out) const {
  if (unused_.empty()) return;
  out << "best.json entries this plan does not run:\n";
  TextTable t({"op", "shape", "variant", "why"});
  for (const auto& u : unused_)
    t.add({u.entry->op, u.entry->shape_text(), std::to_string(u.entry->variant) + " " + u.entry->variant_name, u.reason});
  t.print(out, "  ");
}

void KernelPlan::print(std::ostream& out) const {
  TextTable t({"op", "shape", "calls", "backend", "variant", "name", "launch", "class", "from"});
  for (const auto& s : selections_)
    t.add({s.op->name, s.op->describe_shape(s.shape), std::to_string(s.calls),
           std::string(to_string(s.variant->backend)), std::to_string(s.variant->id), s.variant->name,
           s.params.describe(), std::string(to_string(s.variant->numeric)), s.origin});
  t.print(out, "  ");
}

}  // namespace wb::trainer
