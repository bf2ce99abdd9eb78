// The PyTorch rungs (docs/torch.md): eager (80) and torch.compile (81) of every op, from
// variants/<op>/torch.py, in each op's cpu ladder (and cuda's, with nvcc); never a
// default; run, checked and timed through PyTorch's process, where a wrong one is
// INCORRECT with the reason (the planted rungs of tests/torch/planted/).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>

#include "base/errors.h"
#include "contract/registry.h"
#include "contract/registry_table.h"
#include "tests/support/programs.h"
#include "tests/support/test_helpers.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/kernel_plan.h"
#include "workbench/runtime/report.h"
#include "workbench/runtime/torch_rung.h"

namespace wb {
namespace {

using testing::contains;
using testing::Result;
using testing::run_planted;

// Why PyTorch cannot run here ("" when it can): its process's greeting.
std::string torch_missing() {
  try {
    torch_version();
    return "";
  } catch (const Unsupported& e) {
    return e.what();
  }
}

TEST(TorchRungs, EveryOpHasBothOnCpuWithTheFilesIdentity) {
  const Registry& reg = Registry::global();
  std::set<std::string> with_file;
  for (const TorchRungFile& f : torch_rung_files()) {
    with_file.insert(f.op);
    const OpSpec* op = reg.find_op(f.op);
    ASSERT_TRUE(op) << f.source;
    for (int id : {kTorchEagerId, kTorchCompileId}) {
      const Variant* v = reg.find(f.op, Backend::cpu, id);
      ASSERT_TRUE(v) << f.op << " cpu/" << id;
      EXPECT_TRUE(is_torch_rung(*v));
      EXPECT_FALSE(is_triton_rung(*v));
      EXPECT_EQ(v->source, f.source);
      EXPECT_EQ(v->source_hash, f.identity);
      EXPECT_EQ(v->source_hash.size(), 64u);
      EXPECT_EQ(v->numeric, NumericClass::fp32) << v->key() << ": the op's own contract, as its hand-written rungs";
      EXPECT_EQ(v->name, id == kTorchEagerId ? "torch_eager" : "torch_compile");
      EXPECT_FALSE(reg.find(f.op, Backend::emu, id)) << "PyTorch's kernels are not emulated";
      // Eager keeps one order of additions per thread count; torch.compile's C++ only on
      // one thread (its scatter-adds are atomic across threads).
      EXPECT_TRUE(v->claims_deterministic(ParamValues{{"threads", 1}})) << v->key();
      EXPECT_EQ(v->claims_deterministic(ParamValues{{"threads", 2}}), id == kTorchEagerId) << v->key();
#if WB_HAVE_CUDA
      EXPECT_FALSE(reg.find(f.op, Backend::cuda, id)->claims_deterministic(ParamValues{})) << f.op << " cuda/" << id;
#endif
#if WB_HAVE_CUDA
      EXPECT_TRUE(reg.find(f.op, Backend::cuda, id)) << f.op << " cuda/" << id;
#endif
    }
    EXPECT_NE(reg.find(f.op, Backend::cpu, kTorchEagerId)->source_hash, "") << f.source;
  }
  for (const OpSpec* op : reg.ops()) EXPECT_TRUE(with_file.count(op->name)) << op->name << " has no torch.py";
}

// Ids 80 and 81 are the PyTorch rungs' in every ladder: the next free id of a folder
// is its own ladder's, and no op's default is a PyTorch rung.
TEST(TorchRungs, AreNeitherTheNextFreeIdNorADefault) {
  const Registry& reg = Registry::global();
  std::unique_ptr<Executor> ex = make_executor(Backend::cpu);
  Shape s;
  s.B = 2, s.T = 8, s.C = 64, s.NH = 4, s.V = 101, s.Vp = 128, s.OC = 96, s.L = 1;
  for (const OpSpec* op : reg.ops()) {
    EXPECT_LT(reg.next_free_id(op->name, Backend::cpu), kTorchEagerId) << op->name;
    if (op->shape_error && op->shape_error(s)) continue;
    if (const Variant* d = default_variant(reg, op->name, ex->device(), RunFilter{}, s)) {
      EXPECT_FALSE(is_torch_rung(*d)) << d->key();
    }
  }
}

// Its launcher is never called from an argument struct (the harness runs it by name).
TEST(TorchRungs, TheirLauncherRefusesAnArgumentStruct) {
  const Variant& v = Registry::global().variant("gelu_forward", Backend::cpu, kTorchEagerId);
  EXPECT_THROW(v.run(nullptr, Launch{}), std::logic_error);
}

// The planted rungs are INCORRECT, each with its reason, beside the op's own eager
// rung, which passes: the numbers (erf GELU), the storage (fp32 returned for bf16), the
// outputs (mean and rstd not returned).
TEST(TorchRungs, PlantedFaultsAreIncorrectBesideTheOpsOwnRung) {
  if (const std::string why = torch_missing(); !why.empty()) GTEST_SKIP() << why;
  const struct {
    const char* op;
    const char* reason;
  } planted[] = {
      {"gelu_forward", "INCORRECT gelu_forward cpu/92 planted_torch_erf threads="},
      {"layernorm_forward_bf16", "returned 'out' as torch.float32, the contract stores bf16"},
      {"layernorm_forward", "returned no 'mean' (output)"},
  };
  for (const auto& p : planted) {
    const Result r = run_planted(std::string("check ") + p.op + " --backend cpu --variants 80,92 --shapes tiny " +
                                 "--defaults --seed 4");
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, p.reason)) << p.reason << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, std::string("INCORRECT ") + p.op + " cpu/92")) << r.output;
    EXPECT_FALSE(contains(r.output, std::string("INCORRECT ") + p.op + " cpu/80")) << r.output;
  }
}

// wb run times a PyTorch rung like any rung (a report with its timing); wb best counts
// its record and chooses nothing from it, saying why.
TEST(TorchRungs, RunTimesThemAndBestLeavesThemOut) {
  if (const std::string why = torch_missing(); !why.empty()) GTEST_SKIP() << why;
  testing::TempDir dir;
  const std::string report = dir / "run.json";
  const Result run =
      testing::run_command(WB_BINARY,
                           "run gelu_forward --backend cpu --variant 80 --shape B=2,T=8,C=64 --repetitions 3 "
                           "--json " +
                               report);
  ASSERT_EQ(run.code, 0) << run.output;
  const Report rep = read_report(report, Registry::global());
  ASSERT_EQ(rep.records.size(), 1u);
  const Record& rec = rep.records.front();
  EXPECT_EQ(rec.status, Status::ok) << rec.reason;
  ASSERT_TRUE(rec.timing);
  EXPECT_GT(rec.timing->median_s, 0);
  const Result best = testing::run_command(WB_BINARY, "best " + report + " --out " + dir / "best.json");
  EXPECT_TRUE(contains(best.output, "1 records of PyTorch rungs (torch_eager, torch_compile) are no candidates"))
      << best.output;
}

}  // namespace
}  // namespace wb
