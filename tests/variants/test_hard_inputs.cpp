// The check inputs are numerically hard where a naive kernel would get away with it:
// softmax_forward and fused_classifier see rows of logits far past where expf overflows,
// so a softmax that does not subtract the row's maximum first is reported incorrect on
// every check shape (a negative control), while the same loop with the maximum
// subtracted passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "contract/ops/softmax_forward.h"
#include "contract/registry.h"
#include "tests/support/test_variant.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/harness.h"

namespace wb {
namespace {

// The softmax loop of a first attempt: exp of every logit, their sum, the quotient.
void softmax_without_max(const SoftmaxForwardArgs& a, const Launch&) {
  for (int64_t row = 0; row < int64_t(a.B) * a.T; ++row) {
    const float* x = a.logits + row * a.Vp;
    float* p = a.probs + row * a.Vp;
    float sum = 0.0f;
    for (int i = 0; i < a.V; ++i) sum += std::exp(x[i]);
    for (int i = 0; i < a.V; ++i) p[i] = std::exp(x[i]) / sum;
    for (int i = a.V; i < a.Vp; ++i) p[i] = 0.0f;
  }
}

// The same loop with the row's maximum subtracted first.
void softmax_with_max(const SoftmaxForwardArgs& a, const Launch&) {
  for (int64_t row = 0; row < int64_t(a.B) * a.T; ++row) {
    const float* x = a.logits + row * a.Vp;
    float* p = a.probs + row * a.Vp;
    const float max = *std::max_element(x, x + a.V);
    float sum = 0.0f;
    for (int i = 0; i < a.V; ++i) sum += std::exp(x[i] - max);
    for (int i = 0; i < a.V; ++i) p[i] = std::exp(x[i] - max) / sum;
    for (int i = a.V; i < a.Vp; ++i) p[i] = 0.0f;
  }
}

Variant softmax_variant(void (*fn)(const SoftmaxForwardArgs&, const Launch&), std::string name) {
  return testing::test_variant(fn, "softmax_forward", std::move(name));
}

TEST(HardInputs, ASoftmaxWithoutMaxSubtractionFailsOnEveryCheckShape) {
  auto ex = make_executor(Backend::cpu);
  const OpSpec& op = Registry::global().op("softmax_forward");
  const Variant naive = softmax_variant(&softmax_without_max, "without_max");
  const Variant stable = softmax_variant(&softmax_with_max, "with_max");
  for (bool emulated : {false, true}) {
    for (const CheckShape& c : named_check_shapes(emulated)) {
      Session session(Registry::global(), op, c.shape, 20261123, *ex);
      const Record bad = session.evaluate(naive, {}, EvalOptions{});
      EXPECT_EQ(bad.status, Status::incorrect) << c.name << ": a softmax without max-subtraction passed";
      EXPECT_NE(bad.reason.find("probs"), std::string::npos) << bad.reason;
      const Record good = session.evaluate(stable, {}, EvalOptions{});
      EXPECT_EQ(good.status, Status::ok) << c.name << ": " << good.reason;
    }
  }
}

TEST(HardInputs, LogitsReachPastWhereExpOverflows) {
  for (const char* name : {"softmax_forward", "fused_classifier"}) {
    const OpSpec& op = Registry::global().op(name);
    const Problem p(Registry::global(), op, parse_shape("B=2,T=3,V=11,Vp=16,L=1"), 7);
    const auto* x = static_cast<const float*>(p.initial.buffers[*op.tensor_index("logits")].data());
    float high = 0, low = 0;
    for (int i = 0; i < 2 * 3 * 16; ++i) high = std::max(high, x[i]), low = std::min(low, x[i]);
    EXPECT_GT(high, 88.8f) << name;  // expf overflows above 88.72
    EXPECT_LT(low, -85.0f) << name;
  }
}

}  // namespace
}  // namespace wb
