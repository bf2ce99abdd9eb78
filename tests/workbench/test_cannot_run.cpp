// One "cannot run here" path (base/errors.h, Unsupported): a variant that cannot run
// a problem -- tensors off the 16-byte boundary its vector accesses need, a shape
// beyond the kernels it instantiates -- is reported as skipped with the reason, never
// as incorrect, and never by faulting. The emulator faults on a misaligned vector
// access as a GPU does, so a variant that forgot its alignment check fails here.
#include <gtest/gtest.h>

#include <string>

#include "base/errors.h"
#include "contract/registry.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/harness.h"

namespace wb {
namespace {

// The first emulator check shape the variant can run at its defaults, if any.
std::optional<Shape> runnable_shape(const Variant& v) {
  for (const CheckShape& c : named_check_shapes(true))
    if (!v.skip_reason(c.shape, v.default_params())) return c.shape;
  return std::nullopt;
}

TEST(CannotRun, MisalignedTensorsAreSkippedOrHandledNeverFaulted) {
  const Registry& reg = Registry::global();
  auto ex = make_executor(Backend::emu);
  int variants = 0, skipped = 0;
  for (const OpSpec* op : reg.ops()) {
    for (const Variant* v : reg.variants(op->name, Backend::emu)) {
      if (!v->not_emulated.empty()) continue;
      const std::optional<Shape> shape = runnable_shape(*v);
      if (!shape) continue;
      for (std::size_t misalign : {std::size_t(4), std::size_t(8)}) {
        Session session(Registry::global(), *op, *shape, 20261123, *ex, false, misalign);
        const Record r = session.evaluate(*v, v->default_params(), EvalOptions{});
        ++variants;
        EXPECT_NE(r.status, Status::incorrect)
            << v->key() << " with tensors " << misalign << " bytes off 16-byte alignment: " << r.reason;
        if (r.status == Status::skipped) {
          ++skipped;
          // "needs 16-byte aligned tensors" (128-bit accesses), or 8-byte (64-bit ones)
          EXPECT_NE(r.reason.find("-byte aligned tensors"), std::string::npos) << v->key() << ": " << r.reason;
        }
      }
    }
  }
  EXPECT_GT(variants, 40);
  EXPECT_GT(skipped, 10);  // the float4 variants say why they cannot run these tensors
}

// (The emulator's fault on a misaligned vector access, what the test above relies on,
// is shown by tests/emu: EmuChecks.MisalignedVectorLoadIsAStickyMisalignedAddressFault.)
TEST(CannotRun, AFloat4VariantRunsAlignedTensorsAndSkipsMisalignedOnes) {
  const Registry& reg = Registry::global();
  auto ex = make_executor(Backend::emu);
  const OpSpec& op = reg.op("residual_forward");
  const Variant& vec4 = reg.variant("residual_forward", Backend::emu, 2);
  const Shape shape = parse_shape("B=2,T=3,C=8");
  Session aligned(Registry::global(), op, shape, 1, *ex);
  EXPECT_EQ(aligned.evaluate(vec4, vec4.default_params(), EvalOptions{}).status, Status::ok);
  Session off(Registry::global(), op, shape, 1, *ex, false, 4);
  const Record r = off.evaluate(vec4, vec4.default_params(), EvalOptions{});
  EXPECT_EQ(r.status, Status::skipped) << r.reason;
}

TEST(CannotRun, ShapesBeyondTheInstantiatedKernelsThrowUnsupported) {
  // The launch limits refuse these shapes before any launch; the launch itself says
  // the same through Unsupported, should a caller (the trainer) get past the limit.
  const Registry& reg = Registry::global();
  auto ex = make_executor(Backend::emu);
  struct Case {
    const char* op;
    int id;
    const char* shape;
  };
  for (const Case& c :
       {Case{"layernorm_forward", 6, "B=1,T=1,C=2052"}, Case{"fused_residual_layernorm_forward", 3, "B=1,T=1,C=2052"},
        Case{"attention_forward", 3, "B=1,T=2,C=260,NH=1"}}) {
    const OpSpec& op = reg.op(c.op);
    const Variant& v = reg.variant(c.op, Backend::emu, c.id);
    const Shape shape = parse_shape(c.shape);
    ASSERT_TRUE(v.skip_reason(shape, v.default_params())) << v.key() << " at " << c.shape;
    ExecutorTensors tensors(*ex, op, shape);
    Launch launch;
    launch.params = v.default_params();
    launch.ctx = ex->context();
    EXPECT_THROW(op.invoke(v, tensors.table(), launch), Unsupported) << v.key() << " at " << c.shape;
  }
}

TEST(CannotRun, MisalignmentIsBadInputUnlessAWholeNumberOfFloats) {
  auto ex = make_executor(Backend::cpu);
  const OpSpec& op = Registry::global().op("residual_forward");
  EXPECT_THROW(Session(Registry::global(), op, parse_shape("B=1,T=1,C=4"), 1, *ex, false, 2), UsageError);
  EXPECT_THROW(Session(Registry::global(), op, parse_shape("B=1,T=1,C=4"), 1, *ex, false, 16), UsageError);
}

}  // namespace
}  // namespace wb
