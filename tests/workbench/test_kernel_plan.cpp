// The kernel plan (workbench/runtime/kernel_plan.h) as the trainer builds it: the
// workloads of a GPT-2 step, the choice of each call's variant from best.json by
// precision, device section and instruction-set level, the fallbacks with their
// notices, --deterministic, and the timing of each call of a step (op times).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/errors.h"
#include "contract/registry.h"
#include "tests/support/best_fixtures.h"
#include "tests/support/test_helpers.h"
#include "trainer/gpt2.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/kernel_plan.h"
#include "workbench/runtime/workloads.h"

namespace wb::trainer {
namespace {

using testing::best_for;
using testing::entry;
using testing::usage_error;

// A step of the one-layer model (C=32, two heads) at B=2 T=8 on the cpu: its
// workloads, and its plans from a best.json, which write their notices here.
struct CpuStep {
  std::unique_ptr<Executor> ex = make_executor(Backend::cpu);
  const std::vector<Workload> workloads = step_workloads(config_from_init("1,32,2"), 2, 8);
  std::ostringstream notices;

  KernelPlan plan(const BestFile* best, const PlanOptions& options = {}) {
    return KernelPlan(Registry::global(), *ex, options, best, workloads, notices);
  }
  // The step's activations, B=2 T=8 C=32, and a matmul's output channels where given.
  static Shape shape(int64_t OC = 0) {
    Shape s;
    s.B = 2, s.T = 8, s.C = 32, s.OC = OC;
    return s;
  }
};

// Every matmul with a bias (qkv, attention projection, fc, fc projection) is followed
// by its own matmul_backward_bias; the classifier has none. The fc layer runs fused
// with its GELU (matmul_gelu_forward). One entry per (op, dims),
// its calls counted per step.
TEST(Plan, WorkloadsCountTheBiasGradientCalls) {
  const Config c = config_from_init("3,32,2");
  const int L = 3;
  std::map<std::string, int> calls;
  std::set<std::string> entries;
  for (const Workload& w : step_workloads(c, 2, 8)) {
    calls[w.op] += w.calls;
    const OpSpec& op = Registry::global().op(w.op);
    EXPECT_TRUE(entries.insert(w.op + " " + op.describe_shape(w.shape)).second) << w.op << " listed twice";
  }
  EXPECT_EQ(calls["matmul_forward"], 3 * L + 1);
  EXPECT_EQ(calls["matmul_gelu_forward"], L);
  EXPECT_EQ(calls.count("gelu_forward"), 0u);
  EXPECT_EQ(calls["gelu_backward"], L);
  EXPECT_EQ(calls["matmul_backward"], 4 * L + 1);
  EXPECT_EQ(calls["matmul_backward_bias"], 4 * L);
  for (const Workload& w : step_workloads(c, 2, 8))
    if (w.op == "matmul_backward_bias") {
      EXPECT_EQ(w.shape.B, 2);
      EXPECT_EQ(w.shape.T, 8);
      EXPECT_TRUE(w.shape.OC == 32 || w.shape.OC == 96 || w.shape.OC == 128) << w.shape.OC;
      EXPECT_EQ(w.calls, w.shape.OC == 32 ? 2 * L : L) << w.shape.OC;
    }
}

// The bf16 step calls the _bf16 form of every op, at the fp32 step's shapes and counts,
// and skips the same unfused ops for the same reasons.
TEST(Plan, TheBf16StepCallsTheBf16FormOfEveryOp) {
  const Config c = config_from_init("3,32,2");
  const auto fp32 = step_workloads(c, 2, 8), bf16 = step_workloads(c, 2, 8, Storage::bf16);
  ASSERT_EQ(fp32.size(), bf16.size());
  for (std::size_t i = 0; i < fp32.size(); ++i) {
    EXPECT_EQ(bf16[i].op, fp32[i].op + "_bf16");
    EXPECT_NO_THROW(Registry::global().op(bf16[i].op)) << bf16[i].op;
    EXPECT_EQ(bf16[i].shape, fp32[i].shape) << bf16[i].op;
    EXPECT_EQ(bf16[i].calls, fp32[i].calls) << bf16[i].op;
  }
  for (const char* op : {"residual_forward", "gelu_forward", "softmax_forward"})
    EXPECT_EQ(why_the_step_skips(std::string(op) + "_bf16"), why_the_step_skips(op)) << op;
  EXPECT_EQ(why_the_step_skips("matmul_forward_bf16"), "");
}

// best.json entries are chosen per precision by the op's name: the fp32 plan runs the
// matmul_backward entry and leaves the matmul_backward_bf16 one unused, the bf16 plan
// the reverse.
TEST(Plan, EachPrecisionRunsItsOwnEntries) {
  auto ex = make_executor(Backend::cpu);
  const Config c = config_from_init("1,32,2");
  Shape fc;
  fc.B = 2, fc.T = 8, fc.C = 32, fc.OC = 4 * 32;
  const BestFile b = best_for(*ex, {entry("matmul_backward", fc, 1), entry("matmul_backward_bf16", fc, 1)});
  std::ostringstream notices;
  PlanOptions fp32_options, bf16_options;
  bf16_options.precision = NumericClass::bf16;
  const KernelPlan fp32(Registry::global(), *ex, fp32_options, &b, step_workloads(c, 2, 8), notices);
  const KernelPlan bf16(Registry::global(), *ex, bf16_options, &b, step_workloads(c, 2, 8, Storage::bf16), notices);
  EXPECT_EQ(fp32.at("matmul_backward", fc).origin, "best.json");
  EXPECT_EQ(fp32.at("matmul_backward", fc).variant->id, 1);
  EXPECT_EQ(bf16.at("matmul_backward_bf16", fc).origin, "best.json");
  EXPECT_EQ(bf16.at("matmul_backward_bf16", fc).variant->id, 1);
  ASSERT_EQ(fp32.unused().size(), 1u);
  EXPECT_EQ(fp32.unused()[0].entry->op, "matmul_backward_bf16");
  ASSERT_EQ(bf16.unused().size(), 1u);
  EXPECT_EQ(bf16.unused()[0].entry->op, "matmul_backward");
}

TEST(Plan, DefaultsBestJsonAndFallbacks) {
  CpuStep step;
  const KernelPlan defaults = step.plan(nullptr);
  const Shape mm = CpuStep::shape(96);
  EXPECT_EQ(defaults.at("matmul_forward", mm).variant->id, 3);  // the highest id of the CPU ladder
  EXPECT_EQ(defaults.at("matmul_forward", mm).origin, "default");

  // Chosen for exactly this shape, and for another shape of the op (qkv's choice serves
  // the other matmuls); ops absent from best.json run their defaults, with a notice.
  const BestFile b = best_for(*step.ex, {entry("matmul_forward", mm, 2)});
  const KernelPlan plan = step.plan(&b);
  EXPECT_EQ(plan.at("matmul_forward", mm).variant->id, 2);
  EXPECT_EQ(plan.at("matmul_forward", mm).origin, "best.json");
  Shape attproj = mm;
  attproj.OC = 32;
  EXPECT_EQ(plan.at("matmul_forward", attproj).variant->id, 2);
  EXPECT_NE(plan.at("matmul_forward", attproj).origin.find("chosen at"), std::string::npos);
  EXPECT_NE(step.notices.str().find("layernorm_forward at B=2 T=8 C=32 is not in best.json"), std::string::npos);
}

// For every call of the step, best.json names a variant and launch parameters that
// differ from the default wherever the backend allows; the plan must run exactly those
// (and then no entry is left unused), on every backend this build has.
TEST(Plan, RunsExactlyTheBestJsonChoiceOfEveryCall) {
  const Registry& reg = Registry::global();
  const Config c = config_from_init("2,64,4");
  const auto workloads = step_workloads(c, 2, 16);
  std::vector<Backend> backends{Backend::cpu};
  for (Backend b : backends) {
    auto ex = make_executor(b);
    std::ostringstream notices;
    const KernelPlan defaults(reg, *ex, PlanOptions{}, nullptr, workloads, notices);
    std::vector<BestEntry> entries;
    for (const Workload& w : workloads) {
      const Selection& d = defaults.at(w.op, w.shape);
      // The last runnable (variant, configuration) of an allowed class, other than the default.
      BestEntry e = entry(w.op, w.shape, d.variant->id);
      e.params = d.params;
      for (const Variant* v : reg.variants(w.op, b)) {
        if (v->numeric != NumericClass::fp32 || is_torch_rung(*v)) continue;  // PyTorch's: never the plan's
        for (const ParamValues& p : v->all_params())
          if (!v->skip_reason(w.shape, p) && !(v == d.variant && p == d.params)) {
            e.variant = v->id;
            e.params = p;
          }
      }
      entries.push_back(e);
    }
    const BestFile best = best_for(*ex, entries);
    const KernelPlan plan(reg, *ex, PlanOptions{}, &best, workloads, notices);
    for (const Workload& w : workloads) {
      const Selection& s = plan.at(w.op, w.shape);
      const BestEntry* e = best.sections[0].find(w.op, w.shape);
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(s.variant->id, e->variant) << w.op << " at " << describe(w.shape, reg.op(w.op).dims);
      EXPECT_EQ(s.params, e->params) << w.op << " at " << describe(w.shape, reg.op(w.op).dims);
      EXPECT_EQ(s.entry, e) << w.op;
      EXPECT_EQ(s.origin, "best.json") << w.op;
    }
    EXPECT_TRUE(plan.unused().empty()) << plan.unused().front().entry->op << ": " << plan.unused().front().reason;
  }
}

TEST(Plan, ListsTheEntriesItDoesNotRunWithTheReason) {
  CpuStep step;
  const Shape btc = CpuStep::shape();
  Shape other = btc;
  other.T = 64;
  BestEntry lnf = entry("layernorm_forward", other, 1);
  Shape fc = btc;
  fc.C = 4 * 32;
  const BestFile b = best_for(*step.ex, {entry("residual_forward", btc, 1), entry("layernorm_forward", btc, 1), lnf,
                                         entry("softmax_forward", btc, 1), entry("gelu_forward", fc, 1)});
  PlanOptions trainer_options;  // the trainer says why its step never calls some ops
  trainer_options.why_not_called = why_the_step_skips;
  const KernelPlan plan = step.plan(&b, trainer_options);
  ASSERT_EQ(plan.unused().size(), 4u);
  EXPECT_EQ(plan.unused()[0].entry->op, "residual_forward");
  EXPECT_NE(plan.unused()[0].reason.find("fused_residual_layernorm_forward"), std::string::npos);
  EXPECT_EQ(plan.unused()[1].entry->op, "layernorm_forward");
  EXPECT_NE(plan.unused()[1].reason.find("measured at B=2 T=64 C=32"), std::string::npos);
  EXPECT_NE(plan.unused()[2].reason.find("fused_classifier"), std::string::npos);
  EXPECT_EQ(plan.unused()[3].entry->op, "gelu_forward");
  EXPECT_NE(plan.unused()[3].reason.find("matmul_gelu_forward"), std::string::npos);
  std::ostringstream printed;
  plan.print_unused(printed);
  EXPECT_NE(printed.str().find("best.json entries this plan does not run"), std::string::npos);
  EXPECT_NE(printed.str().find("B=2 T=64 C=32"), std::string::npos) << printed.str();
  // A run's header counts the entries of other shapes in one line; the others keep a row.
  std::ostringstream summary;
  plan.print_unused(summary, /*all=*/false);
  EXPECT_EQ(summary.str().find("B=2 T=64 C=32"), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find("1 entry measured at shapes this run does not call (--print-plan lists them)"),
            std::string::npos)
      << summary.str();
  EXPECT_NE(summary.str().find("matmul_gelu_forward"), std::string::npos) << summary.str();
}

TEST(Plan, BadKernelFilesAreUsageErrors) {
  CpuStep step;
  const auto& ex = step.ex;
  const Shape s = CpuStep::shape();
  auto plan_error = [&](const BestFile& b) { return usage_error([&] { step.plan(&b); }); };
  EXPECT_NE(plan_error(best_for(*ex, {entry("layernorm_forward", s, 9)})).find("unknown variant 9"), std::string::npos);
  BestEntry unknown = entry("layernorm_forward", s, 1);
  unknown.op = "layernorm";
  EXPECT_NE(plan_error(best_for(*ex, {unknown})).find("unknown op 'layernorm'"), std::string::npos);
  BestEntry bad_params = entry("layernorm_forward", s, 1);
  bad_params.params.set("block_size", 128);
  EXPECT_NE(plan_error(best_for(*ex, {bad_params})).find("no launch parameter"), std::string::npos);
}

// A CPU rung's thread counts go up to this machine's OpenMP maximum: an entry made on
// a larger machine names a count this one lacks, and the plan runs the default for it,
// with the reason, rather than refusing the whole file.
TEST(Plan, AThreadCountThisMachineLacksFallsBack) {
  CpuStep step;
  const Shape s = CpuStep::shape();
  BestEntry e = entry("layernorm_forward", s, 2);
  e.params.set("threads", 4096);
  const BestFile b = best_for(*step.ex, {e});
  EXPECT_EQ(step.plan(&b).at("layernorm_forward", s).origin, "default (fallback)");
  EXPECT_NE(step.notices.str().find("best.json names cpu/2, whose threads=4096 is not among its legal values here"),
            std::string::npos)
      << step.notices.str();
}

// Another CPU model takes the section of one with the same architecture, announced;
// --strict-device refuses it; another backend's sections leave the defaults.
TEST(Plan, TakesTheClosestSectionUnlessStrict) {
  CpuStep step;
  const auto& ex = step.ex;
  std::ostringstream& notices = step.notices;
  const Shape s = CpuStep::shape();
  BestFile other = best_for(*ex, {entry("layernorm_forward", s, 1)});
  other.sections[0].device_name = "Another CPU";
  other.sections[0].device_slug = "cpu-another-cpu";
  const KernelPlan plan = step.plan(&other);
  EXPECT_EQ(plan.section(), &other.sections[0]);
  EXPECT_EQ(plan.at("layernorm_forward", s).origin, "best.json");
  const std::string level = ex->device().isa.empty() ? "" : " at " + ex->device().isa;
  EXPECT_NE(
      notices.str().find("the closest section, cpu/cpu-another-cpu (also " + ex->device().architecture + level + ")"),
      std::string::npos)
      << notices.str();
  PlanOptions strict;
  strict.strict_device = true;
  EXPECT_NE(usage_error([&] {
              step.plan(&other, strict);
            }).find("--strict-device: the kernels file has no section for this device"),
            std::string::npos);
  BestFile gpu = best_for(*ex, {entry("layernorm_forward", s, 1)});
  gpu.sections[0].backend = Backend::cuda;
  notices.str("");
  const KernelPlan defaults = step.plan(&gpu);
  EXPECT_EQ(defaults.section(), nullptr);
  EXPECT_EQ(defaults.at("layernorm_forward", s).origin, "default");
  EXPECT_NE(notices.str().find("every op runs its default variant"), std::string::npos) << notices.str();
}

// Among CPU sections of the same architecture, the one at this CPU's instruction-set
// level; else the nearest below (every rung it names runs here), else above; the notice
// says when the level differs.
TEST(Plan, TakesTheSectionOfTheSameInstructionSetLevel) {
  DeviceInfo here;
  here.backend = Backend::cpu;
  here.slug = "cpu-this-cpu-avx2";
  here.architecture = "x86_64";
  here.isa = "avx2";
  BestFile file;
  for (const char* level : {"avx512bf16", "sse2", "avx2", "avx512"}) {
    BestSection s;
    s.backend = Backend::cpu;
    s.device_slug = std::string("cpu-other-") + level;
    s.architecture = "x86_64";
    s.isa = level;
    file.sections.push_back(s);
  }
  SectionChoice c = choose_section(file, here);
  ASSERT_TRUE(c.section);
  EXPECT_EQ(c.section->isa, "avx2");
  EXPECT_FALSE(c.exact);
  EXPECT_NE(c.why.find("(also x86_64 at avx2)"), std::string::npos) << c.why;
  file.sections.erase(file.sections.begin() + 2);  // no avx2 section: the nearest below
  c = choose_section(file, here);
  ASSERT_TRUE(c.section);
  EXPECT_EQ(c.section->isa, "sse2");
  EXPECT_NE(c.why.find("measured at sse2 where this CPU runs avx2"), std::string::npos) << c.why;
  file.sections.erase(file.sections.begin() + 1);  // nothing below: the nearest above
  c = choose_section(file, here);
  ASSERT_TRUE(c.section);
  EXPECT_EQ(c.section->isa, "avx512");
  EXPECT_NE(c.why.find("the rungs it cannot run fall back to defaults"), std::string::npos) << c.why;
  here.slug = "cpu-other-avx512";  // its own section, whatever the others
  c = choose_section(file, here);
  EXPECT_TRUE(c.exact);
}

// Emulating a CUDA section: an entry the emulator cannot run (cuBLASLt) falls back to
// the default for that op alone; --deterministic passes over float-atomic variants and
// entries whose report saw two runs differ.
TEST(Plan, FallsBackPerOpAndHonoursDeterministic) {
  const Registry& reg = Registry::global();
  auto ex = make_executor(Backend::emu);
  const Config c = config_from_init("1,64,2");
  const auto workloads = step_workloads(c, 2, 8);
  Shape btc;
  btc.B = 2, btc.T = 8, btc.C = 64;
  const Variant* lt = nullptr;
  for (const Variant* v : reg.variants("matmul_backward", Backend::emu))
    if (!v->not_emulated.empty()) lt = v;
  ASSERT_NE(lt, nullptr) << "matmul_backward has no variant the emulator skips";
  const auto mmb = std::find_if(workloads.begin(), workloads.end(),
                                [](const Workload& w) { return w.op == "matmul_backward"; });
  ASSERT_NE(mmb, workloads.end()) << "the step has no matmul_backward";
  const Variant* atomics = nullptr;
  for (const Variant* v : reg.variants("layernorm_backward", Backend::emu))
    if (!v->claims_deterministic(v->default_params()) && !v->skip_reason(btc, v->default_params())) atomics = v;
  ASSERT_NE(atomics, nullptr) << "layernorm_backward has no float-atomic variant";
  BestEntry drifted = entry(
      "matmul_forward",
      [&] {
        Shape mm = btc;
        mm.OC = 3 * 64;
        return mm;
      }(),
      1);
  drifted.deterministic = false;
  const BestFile b = best_for(
      *ex, {entry("matmul_backward", mmb->shape, lt->id), entry("layernorm_backward", btc, atomics->id), drifted});
  std::ostringstream notices;
  const KernelPlan plan(reg, *ex, PlanOptions{}, &b, workloads, notices);
  EXPECT_EQ(plan.at("matmul_backward", mmb->shape).origin, "default (fallback)");
  EXPECT_NE(notices.str().find("which cannot run here (not emulated"), std::string::npos) << notices.str();
  EXPECT_EQ(plan.at("layernorm_backward", btc).variant, atomics);
  EXPECT_EQ(plan.at("layernorm_backward", btc).origin, "best.json");

  PlanOptions deterministic;
  deterministic.deterministic = true;
  notices.str("");
  const KernelPlan repeatable(reg, *ex, deterministic, &b, workloads, notices);
  for (const Selection& s : repeatable.selections())
    EXPECT_TRUE(s.variant->claims_deterministic(s.params)) << s.variant->key();
  EXPECT_NE(repeatable.at("layernorm_backward", btc).variant, atomics);
  EXPECT_NE(notices.str().find("not deterministic"), std::string::npos) << notices.str();
  EXPECT_NE(notices.str().find("whose report saw two runs differ"), std::string::npos) << notices.str();
}

// A Triton rung (docs/triton.md) is never an op's default, and on emu a best.json that
// names one falls back to the default with a warning: there it runs under Triton's
// interpreter, which is for checks. Skipped where the build has no Triton rung.
TEST(Plan, ATritonRungIsNeverTheDefaultAndOnEmuFallsBack) {
  const Registry& reg = Registry::global();
  auto ex = make_executor(Backend::emu);
  const Config c = config_from_init("1,64,2");
  const auto workloads = step_workloads(c, 2, 8);
  Shape btc;
  btc.B = 2, btc.T = 8, btc.C = 64;
  const Variant* triton = nullptr;
  for (const Variant* v : reg.variants("layernorm_forward", Backend::emu))
    if (is_triton_rung(*v)) triton = v;
  if (!triton) GTEST_SKIP() << "this build has no Triton rung of layernorm_forward (no Python venv when configured)";

  std::ostringstream notices;
  const KernelPlan defaults(reg, *ex, PlanOptions{}, nullptr, workloads, notices);
  for (const Selection& s : defaults.selections()) EXPECT_FALSE(is_triton_rung(*s.variant)) << s.variant->key();

  const BestFile b = best_for(*ex, {entry("layernorm_forward", btc, triton->id)});
  notices.str("");
  const KernelPlan plan(reg, *ex, PlanOptions{}, &b, workloads, notices);
  EXPECT_NE(plan.at("layernorm_forward", btc).variant, triton);
  EXPECT_EQ(plan.at("layernorm_forward", btc).origin, "default (fallback)");
  EXPECT_NE(notices.str().find("a Triton rung: on emu it runs under Triton's interpreter"), std::string::npos)
      << notices.str();
}

// A PyTorch rung (docs/torch.md) needs Python at run time: never a default, and a
// best.json that names one (made by hand: wb best never chooses one) falls back with
// the warning saying why.
TEST(Plan, APyTorchRungIsNeverSelected) {
  CpuStep step;
  const KernelPlan defaults = step.plan(nullptr);
  for (const Selection& s : defaults.selections()) EXPECT_FALSE(is_torch_rung(*s.variant)) << s.variant->key();
  const BestFile b = best_for(*step.ex, {entry("layernorm_forward", CpuStep::shape(), kTorchCompileId)});
  step.notices.str("");
  const KernelPlan plan = step.plan(&b);
  EXPECT_FALSE(is_torch_rung(*plan.at("layernorm_forward", CpuStep::shape()).variant));
  EXPECT_EQ(plan.at("layernorm_forward", CpuStep::shape()).origin, "default (fallback)");
  EXPECT_NE(step.notices.str().find("a PyTorch rung: it needs Python at run time"), std::string::npos)
      << step.notices.str();
}

// On cuda the plan takes the Triton rung best.json names, like any rung: its cubins are
// linked in (a build with nvcc and the venv). Planned here for an H200 without one: the
// selection only, nothing runs.
TEST(Plan, OnCudaTheTritonRungBestJsonNamesIsSelected) {
  const Registry& reg = Registry::global();
  const Variant* triton = nullptr;
  for (const Variant* v : reg.variants("layernorm_forward", Backend::cuda))
    if (is_triton_rung(*v)) triton = v;
  if (!triton) GTEST_SKIP() << "this build has no cubins of a Triton rung (no nvcc, or no Python venv)";
  DeviceInfo h200;
  h200.backend = Backend::cuda;
  h200.name = "NVIDIA H200";
  h200.slug = "nvidia-h200";
  h200.compute_capability = "9.0";
  h200.architecture = "sm_90";
  h200.multiprocessors = 132;
  Shape btc;
  btc.B = 2, btc.T = 8, btc.C = 64;
  BestSection section;
  section.backend = Backend::cuda;
  section.device_name = h200.name;
  section.device_slug = h200.slug;
  section.architecture = h200.architecture;
  section.compute_capability = h200.compute_capability;
  BestEntry e = entry("layernorm_forward", btc, triton->id);
  e.params = ParamValues{{"num_warps", 8}};
  section.entries = {e};
  BestFile b;
  b.sections.push_back(section);
  std::ostringstream notices;
  const PlanSelections plan = select_kernels(reg, h200, Backend::cuda, PlanOptions{}, &b,
                                             step_workloads(config_from_init("1,64,2"), 2, 8), notices);
  bool found = false;
  for (const Selection& s : plan.selections)
    if (s.op->name == "layernorm_forward") {
      found = true;
      EXPECT_EQ(s.variant, triton) << notices.str();
      EXPECT_EQ(s.origin, "best.json");
      EXPECT_EQ(s.params.get("num_warps"), 8);
    }
  EXPECT_TRUE(found);
}

// An executor that runs everything on the cpu one, but whose markers are a counter:
// record() is one tick, so a call's time, from the marker before it to the one after,
// is exactly one tick, and a selection's time is the number of its calls timed.
class TickingExecutor final : public Executor {
 public:
  Backend backend() const override { return cpu_->backend(); }
  const DeviceInfo& device() const override { return cpu_->device(); }
  ExecContext* context() override { return cpu_->context(); }
  void* allocate(std::size_t bytes) override { return cpu_->allocate(bytes); }
  void release(void* p) noexcept override { cpu_->release(p); }
  void to_device(void* dst, const void* src, std::size_t bytes) override { cpu_->to_device(dst, src, bytes); }
  void to_host(void* dst, const void* src, std::size_t bytes) override { cpu_->to_host(dst, src, bytes); }
  void poison(void* dst, std::size_t bytes) override { cpu_->poison(dst, bytes); }
  void zero(void* dst, std::size_t bytes) override { cpu_->zero(dst, bytes); }
  void synchronize() override { cpu_->synchronize(); }
  double time_launch(const std::function<void()>& launch) override { return cpu_->time_launch(launch); }
  Ceilings measure_ceilings() override { return cpu_->measure_ceilings(); }
  std::unique_ptr<Markers> make_markers(std::size_t n) override {
    made += n;
    return std::make_unique<Ticks>(n);
  }
  std::size_t made = 0;  // markers made, in all

 private:
  struct Ticks final : Markers {
    explicit Ticks(std::size_t n) : Markers(n), at(n) {}
    void record(std::size_t i) override {
      check_index(i, "Markers::record");
      at[i] = ++clock;
      recorded_[i] = true;
    }
    double seconds_between(std::size_t i, std::size_t j) override {
      check_recorded(i, j);
      return double(at[j] - at[i]);
    }
    std::vector<int64_t> at;
    int64_t clock = 0;
  };
  std::unique_ptr<Executor> cpu_ = make_executor(Backend::cpu);
};

// Op times (KernelPlan::begin_op_times .. collect_op_times): the plan makes its markers
// once, two per call its workloads count; each call of a step is timed on its own
// selection, step after step; calls outside the pair (a validation pass) are not timed;
// a step that makes more calls than counted is wb's bug, std::logic_error before the
// call runs; after stop_timing_ops() nothing is timed.
TEST(Plan, OpTimesTimeEveryCallOfAStepOnItsSelection) {
  TickingExecutor ex;
  const Config c = config_from_init("1,32,2");
  std::ostringstream notices;
  KernelPlan plan(Registry::global(), ex, PlanOptions{}, nullptr, step_workloads(c, 2, 8), notices);
  std::size_t calls = 0;
  for (const Selection& s : plan.selections()) calls += std::size_t(s.calls);
  EXPECT_EQ(ex.made, 2 * calls);
  const std::unique_ptr<Gpt2> model = make_gpt2(c, 2, 8, ex, plan, Storage::fp32);
  model->load_params(init_params(c, 1).data());
  std::vector<int32_t> inputs(16), targets(16);
  for (int i = 0; i < 16; ++i) inputs[i] = i, targets[i] = i + 1;
  auto step = [&] {
    model->forward(inputs.data(), targets.data());
    model->backward();
    model->update(UpdateSettings{});
  };

  ASSERT_TRUE(plan.times_ops());
  step();  // before begin_op_times: not timed
  EXPECT_EQ(plan.timed_calls(), 0u);
  EXPECT_EQ(plan.op_seconds(), 0.0);
  for (int round = 0; round < 2; ++round) {  // the same markers, step after step
    plan.begin_op_times();
    step();
    EXPECT_TRUE(std::isfinite(model->loss()));
    EXPECT_EQ(plan.timed_calls(), calls) << round;
    plan.collect_op_times();
    for (std::size_t i = 0; i < plan.selections().size(); ++i) {
      const Selection& s = plan.selections()[i];
      EXPECT_EQ(plan.selection_seconds()[i], double(s.calls)) << s.op->name << " " << s.op->describe_shape(s.shape);
    }
    EXPECT_EQ(plan.op_seconds(), double(calls));
    plan.collect_op_times();  // once collected, the step's times stand
    EXPECT_EQ(plan.op_seconds(), double(calls));
    model->forward(inputs.data(), targets.data());  // a validation pass after the step
    EXPECT_EQ(plan.timed_calls(), calls);
  }
  EXPECT_EQ(ex.made, 2 * calls);  // none made during the steps

  plan.begin_op_times();
  step();
  try {
    model->forward(inputs.data(), targets.data());
    ADD_FAILURE() << "a call beyond the " << calls << " the workloads count was timed";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("encoder_forward: the step made more op calls than the " +
                                         std::to_string(calls) + " its workloads count"),
              std::string::npos)
        << e.what();
  }

  plan.stop_timing_ops();  // a step replayed as a CUDA graph
  EXPECT_FALSE(plan.times_ops());
  plan.begin_op_times();
  step();
  EXPECT_EQ(plan.timed_calls(), 0u);
  plan.collect_op_times();
  EXPECT_EQ(plan.op_seconds(), 0.0);
}

}  // namespace
}  // namespace wb::trainer
