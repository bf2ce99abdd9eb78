// Sizes: every product of shape dims is overflow-checked, a shape that no memory here
// can hold is refused before anything is allocated, and a shape past the 32-bit counts
// of an op's arguments is refused, each as bad input naming the dims.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "base/checked.h"
#include "contract/ops/all.h"
#include "contract/shape.h"
#include "tests/support/test_helpers.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/problem.h"

namespace wb {
namespace {

using testing::Result;
using testing::usage_error;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

#define EXPECT_USAGE_ERROR(action, text)                           \
  do {                                                             \
    const std::string message_ = usage_error([&] { action; });     \
    EXPECT_NE(message_.find(text), std::string::npos) << message_; \
  } while (0)

TEST(CheckedInt, OverflowIsSticky) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ((CheckedInt(3) * 4 + 5).value(), 17);
  EXPECT_TRUE((CheckedInt(int64_t(1) << 31) * (int64_t(1) << 31)).ok());
  EXPECT_FALSE((CheckedInt(int64_t(1) << 32) * (int64_t(1) << 31)).ok());
  EXPECT_FALSE((CheckedInt(kMax) + 1).ok());
  EXPECT_FALSE(((CheckedInt(kMax) * 2) * 0).ok()) << "once overflowed, a result stays invalid";
  EXPECT_FALSE((CheckedInt(std::numeric_limits<int64_t>::min()) * -1).ok());
}

TEST(Sizes, DerivedDimsThatOverflowAreRefused) {
  EXPECT_USAGE_ERROR(parse_shape("C=4611686018427387904"), "OC = 4*C at C=4611686018427387904");
  EXPECT_USAGE_ERROR(parse_shape("C=3037000500,OC=1"), "N, GPT-2's parameter count");
  EXPECT_USAGE_ERROR(parse_shape("V=9223372036854775807"), "Vp, V=9223372036854775807 rounded up");
  // Given explicitly, they are not derived.
  EXPECT_EQ(parse_shape("C=4611686018427387904,OC=1,N=1").C, int64_t(4611686018427387904));
}

TEST(Sizes, ElementAndByteCountsThatOverflowAreRefused) {
  // 2^62 * 8 elements wrapped to 0: the run segfaulted on empty buffers.
  EXPECT_USAGE_ERROR(residual_forward_op().check_shape(parse_shape("B=4611686018427387904,T=1,C=8")),
                     "residual_forward: tensor 'out' (B, T, C) at B=4611686018427387904 T=1 C=8 has more elements");
  // (2^54 + 1) * 2^20 wrapped to 2^20: it ran a small problem and reported it as this one.
  EXPECT_USAGE_ERROR(residual_forward_op().check_shape(parse_shape("B=18014398509481985,T=1024,C=1024")),
                     "B=18014398509481985 T=1024 C=1024");
  // Fits as elements, not as bytes.
  EXPECT_USAGE_ERROR(gelu_forward_op().check_shape(parse_shape("B=2305843009213693952,T=1,C=1,L=1")),
                     "more elements than 64-bit sizes can count");
  // A literal factor too: qkv is (B, T, 3C).
  EXPECT_USAGE_ERROR(
      attention_forward_op().tensor("qkv").dims(parse_shape("B=1,T=1,C=3074457345618258603,NH=1,OC=1,N=1")),
      "tensor 'qkv' (B, T, 3C) at B=1 T=1 C=3074457345618258603: the extent 3C does not fit in 64 bits");
}

TEST(Sizes, ThirtyTwoBitCountsOfTheArgumentsAreLimits) {
  EXPECT_USAGE_ERROR(layernorm_forward_op().check_shape(parse_shape("B=1,T=2147483648,C=1,L=1")),
                     "layernorm_forward cannot take the shape B=1 T=2147483648 C=1: T=2147483648 exceeds 2^31-1");
  EXPECT_USAGE_ERROR(softmax_forward_op().check_shape(parse_shape("B=65536,T=32768,V=1,Vp=1,L=1")),
                     "B*T at B=65536 T=32768 exceeds 2^31-1");
  EXPECT_USAGE_ERROR(attention_forward_op().check_shape(parse_shape("B=1,T=1,C=715827883,NH=1,L=1")),
                     "3*C at C=715827883 exceeds 2^31-1");
  EXPECT_USAGE_ERROR(encoder_forward_op().check_shape(parse_shape("B=1,T=1,C=1,V=2147483648,L=1")),
                     "V=2147483648 exceeds 2^31-1");
  // The ops whose arguments count in 64 bits take it.
  EXPECT_NO_THROW(residual_forward_op().check_shape(parse_shape("B=1,T=2147483648,C=1,L=1")));
  EXPECT_NO_THROW(layernorm_forward_op().check_shape(parse_shape("B=1,T=2147483647,C=1,L=1")));
}

TEST(Sizes, ShapesPastMemoryAreRefusedBeforeAllocating) {
  if (host_memory_bytes() <= 0) GTEST_SKIP() << "this machine does not say how much memory it has";
  auto ex = make_executor(Backend::cpu);
  // 2^40 floats a tensor: far past any host memory, and allocating would throw or swap.
  const Shape huge = parse_shape("B=1048576,T=1024,C=1024,L=1");
  EXPECT_USAGE_ERROR(
      check_session_fits(residual_forward_op(), huge, *ex),
      "residual_forward at B=1048576 T=1024 C=1024 needs 72.0 TiB of host memory (6 sets of its tensors");
  EXPECT_USAGE_ERROR(Session(Registry::global(), residual_forward_op(), huge, 1, *ex), "of host memory");
  EXPECT_USAGE_ERROR(Problem(Registry::global(), residual_forward_op(), huge, 1), "needs 24.0 TiB of host memory (2 sets");
  EXPECT_NO_THROW(check_session_fits(residual_forward_op(), parse_shape("B=2,T=8,C=32"), *ex));
}

TEST(Sizes, TheCommandsExitTwoNamingTheDims) {
  const Result overflow = wb("run residual_forward --variant 1 --backend cpu --shape B=4611686018427387904,T=1,C=8");
  EXPECT_EQ(overflow.code, 2) << overflow.output;
  EXPECT_NE(overflow.output.find("B=4611686018427387904 T=1 C=8"), std::string::npos) << overflow.output;
  EXPECT_EXIT_WITH(wb("run residual_forward --variant 1 --backend cpu --shape B=18014398509481985,T=1024,C=1024"), 2,
                   "B=18014398509481985 T=1024 C=1024");
  EXPECT_EXIT_WITH(wb("run residual_forward --variant 1 --backend cpu --shape B=4294967297,T=4294967296"), 2,
                   "B=4294967297 T=4294967296 C=768 has more elements");
  EXPECT_EXIT_WITH(wb("sweep layernorm_forward --backend cpu --shape B=1,T=2147483648,C=1 --out /nonexistent/x.json"),
                   2, "T=2147483648 exceeds 2^31-1");
  if (host_memory_bytes() > 0) {
    EXPECT_EXIT_WITH(wb("run residual_forward --variant 1 --backend cpu --shape B=1048576,T=1024,C=1024"), 2,
                     "of host memory");
    // Refused before the ceilings are measured or anything is swept.
    const Result sweep = wb("sweep residual_forward --backend cpu --shape B=1048576,T=1024,C=1024 --out /dev/null");
    EXPECT_EQ(sweep.code, 2) << sweep.output;
    EXPECT_EQ(sweep.output.find("ceilings"), std::string::npos) << sweep.output;
    EXPECT_EXIT_WITH(wb("dump residual_forward --shape B=1048576,T=1024,C=1024 --out /nonexistent"), 2,
                     "of host memory");
  }
}

}  // namespace
}  // namespace wb
