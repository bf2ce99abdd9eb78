// Op definitions: softmax_forward, crossentropy_forward, crossentropy_softmax_backward,
// fused_classifier. Rows hold Vp values; the first V are real, V..Vp padding.
#include <algorithm>
#include <cmath>

#include "contract/ops/common.h"
#include "contract/ops/crossentropy_forward.h"
#include "contract/ops/crossentropy_softmax_backward.h"
#include "contract/ops/fused_classifier.h"
#include "contract/ops/softmax_forward.h"

namespace wb {
namespace {

double rows(const Shape& s) { return double(s.B) * double(s.T); }

SoftmaxForwardArgs softmax_args(const TensorTable& t) {
  const ops::Stored<float> stored{t};
  return {stored("probs"), stored("logits"), stored.B, stored.T, stored.V, stored.Vp};
}

CrossentropyForwardArgs crossentropy_args(const TensorTable& t) {
  const ops::Stored<float> stored{t};
  return {stored("losses"), stored("probs"), t.i32("targets"), stored.B, stored.T, stored.Vp};
}

CrossentropySoftmaxBackwardArgs crossentropy_backward_args(const TensorTable& t) {
  const ops::Stored<float> stored{t};
  return {stored("dlogits"), stored("dlosses"), stored("probs"), t.i32("targets"),
          stored.B,          stored.T,          stored.V,        stored.Vp};
}

// For the op and its bf16 twin: Float is the storage of the logits; the losses are
// fp32 in both.
template <class Args, class Float>
Args classifier_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("logits"), t.f32("losses"), t.i32("targets"), float(t.scalar("dloss")),
          stored.B,         stored.T,        stored.V,         stored.Vp};
}

// Numerically hard logits. Every fourth row, from the second, is moved up by 90 and
// every fourth, from the fourth, down by 90: past where expf overflows (above 88.7) or
// its results turn subnormal. A kernel that exponentiates without first subtracting
// the row's maximum then computes inf/inf (or loses the row to underflow) and fails;
// one that subtracts it sees exactly the values of an ordinary row, since x - max is
// exact between numbers this close. The other rows stay near 0.
constexpr float kFar = 90.0f;

// dlogits are at most dloss = 1/(B*T) in size: the absolute floor scales with it.
ToleranceFn dlogits_tolerance() {
  return [](NumericClass c, const Shape& s) {
    const double dloss = 1.0 / rows(s);
    const Tolerance base = ops::elementwise(1e-7, 1e-4)(c, s);
    return Tolerance{base.atol * dloss, base.rtol};
  };
}

float far_offset(int64_t row) { return row % 4 == 1 ? kFar : row % 4 == 3 ? -kFar : 0.0f; }

// The logits moved far, row by row, each moved value in their storage Float (rounded to
// nearest even in bf16).
template <class Float>
void move_logits_far(const TensorTable& t, const ReferenceRunner&) {
  const Shape& s = t.shape();
  Float* x = ops::Stored<Float>{t}("logits");
  for (int64_t row = 0; row < s.B * s.T; ++row)
    for (int64_t i = 0; i < s.V; ++i)
      x[row * s.Vp + i] = ops::in_storage<Float>(ops::widened(x[row * s.Vp + i]) + far_offset(row));
}

// probs holds random values; make every row a softmax over its first V (padding 0).
// Every fourth row, from the second, is the softmax of logits stretched to +-36:
// probabilities down to about 1e-31 and losses near 70, still normal floats.
void make_probabilities(const TensorTable& t) {
  const Shape& s = t.shape();
  float* probs = t.f32("probs");
  for (int64_t row = 0; row < s.B * s.T; ++row) {
    float* p = probs + row * s.Vp;
    const double stretch = row % 4 == 1 ? 9.0 : 1.0;
    double max = -HUGE_VAL, sum = 0;
    for (int64_t i = 0; i < s.V; ++i) max = std::max(max, stretch * p[i]);
    for (int64_t i = 0; i < s.V; ++i) sum += std::exp(stretch * p[i] - max);
    for (int64_t i = 0; i < s.V; ++i) p[i] = float(std::exp(stretch * p[i] - max) / sum);
    for (int64_t i = s.V; i < s.Vp; ++i) p[i] = 0.0f;
  }
}

// Targets are int32 tokens below V.
const ops::ShapeCheck kInt32Limits = ops::int32_limits({"B", "T", "V", "Vp", "B*T"});

// Every op of this file reads rows of Vp values over a vocabulary of V.
const ops::Dims kVocabulary{{"B", "T", "V", "Vp"}, kInt32Limits};

}  // namespace

const OpSpec& softmax_forward_op() {
  return ops::define("softmax_forward", kVocabulary, &softmax_args, [](OpSpec& o) {
    o.summary = "softmax over the first V of each row of Vp logits; padding written as 0";
    o.tensors = {output("probs", "B,T,Vp", ops::elementwise(1e-8, 1e-4)),
                 input("logits", "B,T,Vp", Init::uniform(-4, 4))};
    o.prepare = move_logits_far<float>;
    o.flops = [](const Shape& s) { return 5.0 * rows(s) * double(s.V); };
  });
}

const OpSpec& crossentropy_forward_op() {
  return ops::define("crossentropy_forward", kVocabulary, &crossentropy_args, [](OpSpec& o) {
    o.summary = "losses[b,t] = -log probs[b,t,target]";
    o.tensors = {output("losses", "B,T", ops::elementwise()), input("probs", "B,T,Vp", Init::uniform(-4, 4)),
                 token_input("targets", "B,T")};
    o.prepare = [](const TensorTable& t, const ReferenceRunner&) { make_probabilities(t); };
    o.flops = [](const Shape& s) { return rows(s); };
    o.min_bytes = [](const Shape& s) { return 12.0 * rows(s); };  // one probability per row is read
  });
}

const OpSpec& crossentropy_softmax_backward_op() {
  return ops::define("crossentropy_softmax_backward", kVocabulary, &crossentropy_backward_args, [](OpSpec& o) {
    o.summary = "dlogits += (probs - onehot(target)) * dlosses over the first V columns";
    o.tensors = {inout("dlogits", "B,T,Vp", ops::elementwise(1e-6, 1e-5)), input("dlosses", "B,T"),
                 input("probs", "B,T,Vp", Init::uniform(-4, 4)), token_input("targets", "B,T")};
    o.prepare = [](const TensorTable& t, const ReferenceRunner&) { make_probabilities(t); };
    o.flops = [](const Shape& s) { return 2.0 * rows(s) * double(s.V); };
    o.min_bytes = [](const Shape& s) { return 12.0 * rows(s) * double(s.V) + 8.0 * rows(s); };
  });
}

const OpSpec& fused_classifier_op() {
  return ops::define("fused_classifier", kVocabulary, &classifier_args<FusedClassifierArgs, float>, [](OpSpec& o) {
    o.summary = "softmax, loss and dlogits (written over the logits) in one pass; padding -> 0";
    o.tensors = {inout("logits", "B,T,Vp", dlogits_tolerance(), Init::uniform(-4, 4)),
                 output("losses", "B,T", ops::elementwise(1e-5, 1e-5)), token_input("targets", "B,T")};
    o.prepare = move_logits_far<float>;
    o.scalars = {{"dloss", [](const Shape& s) { return 1.0 / rows(s); }, "gradient of the mean loss, 1/(B*T)"}};
    o.flops = [](const Shape& s) { return 7.0 * rows(s) * double(s.V); };
  });
}

const OpSpec& fused_classifier_bf16_op() {
  return ops::twin_of<fused_classifier_op>(
      "softmax, loss and dlogits in one pass on bf16 logits (statistics and losses fp32); padding -> 0",
      &classifier_args<FusedClassifierBf16Args, bf16>, {"losses"},
      [](OpSpec& o) { o.prepare = move_logits_far<bf16>; });
}

}  // namespace wb
