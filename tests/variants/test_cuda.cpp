// Checks that need a CUDA device; each skips with the runtime's reason when none is
// usable (CI has none). Also the host side of the cuBLASLt owners.
#include <gtest/gtest.h>

#include <type_traits>
#include <utility>

#include "contract/registry.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/harness.h"
#if WB_HAVE_CUDA
#include "device/cuda/cublaslt.h"
#include "tests/support/ladder.h"
#endif

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
    const auto variants = testing::wb_rungs(reg, op->name, Backend::cuda);
    if (variants.empty()) continue;
    for (const Shape& shape : check_shapes()) {
      Session session(Registry::global(), *op, shape, ++seed, *ex);
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

#if WB_HAVE_CUDA

// The cuBLASLt owners: not copyable, movable without throwing.
static_assert(!std::is_copy_constructible_v<cuda::LtMatmulDesc> && !std::is_copy_assignable_v<cuda::LtMatmulDesc>);
static_assert(std::is_nothrow_move_constructible_v<cuda::LtMatrixLayout> &&
              std::is_nothrow_move_assignable_v<cuda::LtMatrixLayout>);
static_assert(!std::is_copy_constructible_v<cuda::LtMatmulPreference>);

TEST(CudaLt, AlignmentIsTheLargestPowerOfTwoUpTo256) {
  alignas(256) static float buffer[256];
  const char* base = reinterpret_cast<const char*>(buffer);
  EXPECT_EQ(cuda::alignment_of(base), 256u);
  EXPECT_EQ(cuda::alignment_of(base + 512), 256u);
  EXPECT_EQ(cuda::alignment_of(base + 384), 128u);
  EXPECT_EQ(cuda::alignment_of(base + 16), 16u);
  EXPECT_EQ(cuda::alignment_of(base + 4), 4u);
  EXPECT_EQ(cuda::alignment_of(base + 2), 4u);  // never below 4
}

TEST(CudaLt, OwnersCreateMoveAndRelease) {
  REQUIRE_CUDA();
  cuda::LtMatmulDesc desc(CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);
  EXPECT_NE(desc.get(), nullptr);
  cuda::LtMatmulDesc moved = std::move(desc);
  EXPECT_NE(moved.get(), nullptr);
  EXPECT_EQ(desc.get(), nullptr);  // NOLINT(bugprone-use-after-move): a moved-from owner holds nothing

  cuda::LtMatrixLayout a(CUDA_R_32F, 8, 4, 8), b(CUDA_R_32F, 4, 8, 4);
  const auto b_handle = b.get();
  a = std::move(b);  // a's layout is destroyed, b's moves over
  EXPECT_EQ(a.get(), b_handle);
  EXPECT_EQ(b.get(), nullptr);  // NOLINT(bugprone-use-after-move)

  const cuda::LtMatmulPreference pref = cuda::preference_for(1 << 20, 16, 16, 16);
  EXPECT_NE(pref.get(), nullptr);
}

#endif

}  // namespace
}  // namespace wb
