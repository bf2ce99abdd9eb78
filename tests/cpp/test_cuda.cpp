// Checks that need a CUDA device; each skips with the runtime's reason when none is
// usable (CI has none).
#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/harness.h"

namespace wb {
namespace {

#define REQUIRE_CUDA()                                                                           \
  do {                                                                                           \
    if (auto why = cuda_unavailable_reason()) GTEST_SKIP() << "no usable CUDA device: " << *why; \
  } while (0)

// Every CUDA variant of every op, every legal launch configuration, on every check
// shape: correct, or skipped with a reason.
TEST(Cuda, EveryVariantIsCorrectOnTheCheckShapes) {
  REQUIRE_CUDA();
  const Registry& reg = Registry::global();
  auto ex = make_executor(Backend::cuda);
  EvalOptions o;
  uint64_t seed = 100;
  for (const OpSpec* op : reg.ops()) {
    const auto variants = reg.variants(op->name, Backend::cuda);
    if (variants.empty()) continue;
    for (const Shape& shape : check_shapes()) {
      Session session(*op, shape, ++seed, *ex);
      for (const Variant* v : variants)
        for (const ParamValues& p : v->all_params()) {
          const Record r = session.evaluate(*v, p, o);
          EXPECT_NE(r.status, Status::incorrect)
              << v->key() << " " << p.describe() << " at " << op->describe_shape(shape) << ": " << r.reason;
          if (r.status == Status::skipped) {
            EXPECT_FALSE(r.reason.empty());
          }
        }
    }
  }
}

TEST(Cuda, ExecutorDescribesTheDevice) {
  REQUIRE_CUDA();
  auto ex = make_executor(Backend::cuda);
  const DeviceInfo& d = ex->device();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.multiprocessors, 0);
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_FALSE(d.compute_capability.empty());
}

}  // namespace
}  // namespace wb
