#include "workbench/runtime/kernel_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/errors.h"
#include "workbench/runtime/can_run.h"
#include "workbench/runtime/table.h"

namespace wb {

const Variant* default_variant(const Registry& reg, const std::string& op, const DeviceInfo& d, const RunFilter& f,
                               const Shape& shape) {
  auto variants = reg.variants(op, d.backend);
  // The highest hand-written rung that can run: a Triton rung is chosen only by name
  // (best.json), never by default (on emu it runs under the interpreter, for checks); a
  // PyTorch rung never (it needs Python at run time).
  for (auto it = variants.rbegin(); it != variants.rend(); ++it)
    if (!is_triton_rung(**it) && !is_torch_rung(**it) &&
        !why_cannot_run(reg, **it, shape, (*it)->default_params(), d, f))
      return *it;
  return nullptr;
}

namespace {

std::string at_shape(const OpSpec& op, const Shape& s) { return op.name + " at " + op.describe_shape(s); }

// A launch value of the entry that is not among the variant's legal values on this
// machine ("" when all are): a CPU variant's threads go up to the OpenMP maximum of
// the machine, so threads=16 from a larger one is legal there and not here. The
// entry then cannot run here, like a variant the device lacks.
std::string unavailable_value(const Variant& v, const ParamValues& params) {
  for (const auto& [name, value] : params.items())
    for (const TuningParam& t : v.params)
      if (t.name == name && std::find(t.values.begin(), t.values.end(), value) == t.values.end())
        return name + "=" + std::to_string(value) + " is not among its legal values here (" +
               describe_values(t.values) + ")";
  return "";
}

// The variant an entry names on this backend, or nullptr when this build lacks it (a
// CUDA variant left out of a build without cuDNN: the emulator's build of every .cu
// file knows it). Throws UsageError on an id no build has, or a launch parameter the
// variant does not have (a value it has elsewhere is why_cannot_run's).
const Variant* entry_variant(const Registry& reg, const BestEntry& e, Backend backend) {
  reg.op(e.op);  // unknown op: UsageError
  const Variant* v = reg.find(e.op, backend, e.variant);
  if (!v && backend == Backend::cuda && reg.find(e.op, Backend::emu, e.variant)) return nullptr;
  if (!v) v = &reg.variant(e.op, backend, e.variant);  // UsageError naming the ids
  for (const auto& [name, value] : e.params.items())
    if (std::none_of(v->params.begin(), v->params.end(), [&](const TuningParam& t) { return t.name == name; }))
      v->check_params(ParamValues{{name, value}});  // UsageError naming the parameters it has
  return v;
}

}  // namespace

PlanSelections select_kernels(const Registry& reg, const DeviceInfo& device, Backend backend, const PlanOptions& o,
                              const BestFile* best, const std::vector<Workload>& workloads, std::ostream& notices) {
  PlanSelections out;
  RunFilter filter;
  filter.precision = o.precision;
  filter.deterministic = o.deterministic;
  if (best) {
    const SectionChoice c = choose_section(*best, device);
    out.section = c.section;
    out.section_choice = c.why;
    if (o.strict_device && !c.exact)
      throw UsageError("--strict-device: the kernels file has no section for this device (" +
                       std::string(to_string(backend)) + "/" + device.slug + "); make one here with wb sweep and " +
                       "wb best, or leave out --strict-device to run " +
                       (c.section ? c.section->key() + "'s choices" : std::string("the defaults")));
    if (!c.section)
      notices << "notice: the kernels file has " << c.why << "; every op runs its default variant\n";
    else if (backend == Backend::emu)
      notices << "notice: emulating the kernels of " << c.why << ": the same variants, run by the emulator\n";
    else if (!c.exact)
      notices << "notice: the kernels file has no section for this device; using " << c.why
              << ": its variants are correct here, only their speed was measured elsewhere\n";
  }

  std::map<const BestEntry*, const Variant*> resolved;  // nullptr: this build lacks the variant
  if (out.section)
    for (const auto& e : out.section->entries) resolved[&e] = entry_variant(reg, e, backend);

  for (const Workload& w : workloads) {
    Selection s;
    s.op = &reg.op(w.op);
    s.shape = w.shape;
    s.calls = w.calls;
    const std::string where = at_shape(*s.op, w.shape);
    if (out.section) {
      const BestEntry* e = out.section->find(w.op, w.shape);
      std::string why;
      if (!e) {
        for (const auto& other : out.section->entries)
          if (other.op == w.op && !e) e = &other;
        if (e) why = " (chosen at " + e->shape_text() + ")";
      }
      const Variant* v = e ? resolved.at(e) : nullptr;
      const std::string named = e ? std::string(to_string(backend)) + "/" + std::to_string(e->variant) : "";
      auto refuse = [&](const std::string& reason) {
        notices << "warning: " << where << ": best.json names " << named << ", " << reason << "; using the default\n";
        out.rejected[e] = named + ": " + reason;
      };
      if (!e) {
        notices << "notice: " << where << " is not in best.json; using the default\n";
      } else if (!v) {
        const Variant* twin = reg.find(e->op, Backend::emu, e->variant);
        refuse(twin && is_triton_rung(*twin)
                   ? "a Triton rung this build has no cubins for (configured without the Python venv or without nvcc)"
                   : "which this build lacks (built without cuDNN?)");
      } else if (is_torch_rung(*v)) {
        refuse("a PyTorch rung: it needs Python at run time, which the trainer never runs");
      } else if (backend == Backend::emu && is_triton_rung(*v)) {
        refuse("a Triton rung: on emu it runs under Triton's interpreter, which is for checks, not for training");
      } else {
        const ParamValues params = v->complete(e->params);
        if (const std::string unavailable = unavailable_value(*v, params); !unavailable.empty()) {
          refuse("whose " + unavailable);
        } else if (auto refusal = why_cannot_run(reg, *v, w.shape, params, device, filter)) {
          refuse("which cannot run here (" + refusal->reason + ")");
        } else if (o.deterministic && !e->deterministic) {
          refuse("whose report saw two runs differ (not deterministic)");
        } else {
          s.variant = v;
          s.params = params;
          s.entry = e;
          s.origin = (e->predicted ? "best.json, PREDICTED" : "best.json") + why;
        }
      }
    }
    if (!s.variant) {
      s.variant = default_variant(reg, w.op, device, filter, w.shape);
      if (!s.variant)
        throw UsageError("no " + std::string(to_string(backend)) + " variant of class " +
                         std::string(to_string(o.precision)) + " or narrower" +
                         (o.deterministic ? ", deterministic," : "") + " can run " + where);
      s.params = s.variant->default_params();
      s.origin = out.section ? "default (fallback)" : "default";
    }
    out.workspace = std::max(out.workspace, s.variant->workspace_bytes(w.shape, s.params));
    out.selections.push_back(s);
  }
  return out;
}

KernelPlan::KernelPlan(const Registry& reg, Executor& ex, const PlanOptions& o, const BestFile* best,
                       const std::vector<Workload>& workloads, std::ostream& notices)
    : ex_(ex) {
  PlanSelections chosen = select_kernels(reg, ex.device(), ex.backend(), o, best, workloads, notices);
  selections_ = std::move(chosen.selections);
  section_ = chosen.section;
  section_choice_ = std::move(chosen.section_choice);
  const std::size_t workspace = chosen.workspace;
  std::map<const BestEntry*, std::string>& rejected = chosen.rejected;
  // A predicted section (wb best of a wb sweep --predict-for report) is a start on a GPU
  // nobody measured, never a verification: the plan says which selections it made.
  std::string predicted;
  std::size_t predicted_count = 0;
  for (const Selection& sel : selections_)
    if (sel.entry && sel.entry->predicted) {
      predicted += fmt::format("\n  {} {}/{} {} {}", at_shape(*sel.op, sel.shape), to_string(section_->backend),
                               sel.variant->id, sel.variant->name, sel.params.describe());
      ++predicted_count;
    }
  if (predicted_count)
    notices << "notice: " << predicted_count << " of the plan's " << selections_.size()
            << " selections come from PREDICTED times (" << section_->predicted_model << ", "
            << section_->predicted_description
            << (section_->predicted_device_measured ? "" : ", a device wb never measured")
            << "), chosen among the variants that passed the emulated check and not verified on a GPU:" << predicted
            << "\n";
  workspace_ = Buffer(ex, workspace);
  std::size_t calls = 0;
  for (const Selection& s : selections_) calls += std::size_t(std::max(s.calls, 0));
  timed_selection_.assign(calls, 0);
  markers_ = ex.make_markers(2 * calls);  // before any step: on cuda, CUDA events
  selection_seconds_.assign(selections_.size(), 0.0);

  if (section_) {
    for (const BestEntry& e : section_->entries) {
      const bool used =
          std::any_of(selections_.begin(), selections_.end(), [&](const Selection& sel) { return sel.entry == &e; });
      if (used) continue;
      std::string reason = o.why_not_called ? o.why_not_called(e.op) : "";
      if (reason.empty() && rejected.count(&e)) reason = rejected[&e];
      bool other_shape = false;
      if (reason.empty()) {
        other_shape = std::any_of(workloads.begin(), workloads.end(), [&](const Workload& w) { return w.op == e.op; });
        reason = other_shape ? "measured at " + e.shape_text() +
                                   ", a shape this run does not call (and its other calls have entries of their own)"
                             : "this step does not run " + e.op;
      }
      unused_.push_back({&e, reason, other_shape});
    }
  }
}

std::size_t KernelPlan::index_of(const std::string& op, const Shape& shape) const {
  for (std::size_t i = 0; i < selections_.size(); ++i)
    if (selections_[i].op->name == op && same_dims(selections_[i].shape, shape, selections_[i].op->dims)) return i;
  throw std::logic_error("the kernel plan has no entry for " + op + " at this shape");
}

const Selection& KernelPlan::at(const std::string& op, const Shape& shape) const {
  return selections_[index_of(op, shape)];
}

void KernelPlan::collect_op_times() {
  if (!timing_step_) return;
  timing_step_ = false;
  for (std::size_t k = 0; k < timed_calls_; ++k)
    selection_seconds_[timed_selection_[k]] += markers_->seconds_between(2 * k, 2 * k + 1);
}

void KernelPlan::print_times(std::ostream& out, const std::vector<double>& seconds, int steps,
                             double step_seconds) const {
  if (steps <= 0 || step_seconds <= 0 || seconds.size() != selections_.size()) return;
  std::vector<std::size_t> order(selections_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return seconds[a] > seconds[b]; });
  TextTable t({"op", "shape", "variant", "launch", "calls/step", "ms/step", "% of step"});
  double sum = 0;
  for (std::size_t i : order) {
    const Selection& s = selections_[i];
    sum += seconds[i];
    t.add({s.op->name, s.op->describe_shape(s.shape),
           std::string(to_string(s.variant->backend)) + "/" + std::to_string(s.variant->id) + " " + s.variant->name,
           s.params.describe(), std::to_string(s.calls), fmt::format("{:.2f}", seconds[i] / steps * 1e3),
           fmt::format("{:.1f}", 100.0 * seconds[i] / step_seconds)});
  }
  t.add({"(all ops)", "", "", "", "", fmt::format("{:.2f}", sum / steps * 1e3),
         fmt::format("{:.1f}", 100.0 * sum / step_seconds)});
  t.print(out, "  ");
}

void KernelPlan::print_unused(std::ostream& out, bool all) const {
  if (unused_.empty()) return;
  out << "best.json entries this plan does not run:\n";
  TextTable t({"op", "shape", "variant", "why"});
  int other_shapes = 0;
  for (const auto& u : unused_) {
    if (!all && u.other_shape) {
      ++other_shapes;
      continue;
    }
    t.add(
        {u.entry->op, u.entry->shape_text(), std::to_string(u.entry->variant) + " " + u.entry->variant_name, u.reason});
  }
  if (!t.empty()) t.print(out, "  ");
  if (other_shapes > 0)
    out << fmt::format("  {} {} measured at shapes this run does not call (--print-plan lists them)\n", other_shapes,
                       other_shapes == 1 ? "entry" : "entries");
}

void KernelPlan::print(std::ostream& out) const {
  TextTable t({"op", "shape", "calls", "backend", "variant", "name", "launch", "class", "from"});
  for (const auto& s : selections_)
    t.add({s.op->name, s.op->describe_shape(s.shape), std::to_string(s.calls),
           std::string(to_string(s.variant->backend)), std::to_string(s.variant->id), s.variant->name,
           s.params.describe(), std::string(to_string(s.variant->numeric)), s.origin});
  t.print(out, "  ");
}

}  // namespace wb
