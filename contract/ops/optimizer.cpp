// Op definitions: adamw, global_norm, and their forms on bf16 gradients (adamw_bf16,
// global_norm_bf16). All run over the N parameters of the model (by default GPT-2's
// count at the shape's V, C, L and T).
#include "contract/ops/adamw.h"
#include "contract/ops/common.h"
#include "contract/ops/global_norm.h"

namespace wb {
namespace {

// What AdamwArgs and AdamwBf16Args share: the parameters and gradients (in the storage
// Float), the moments, and the scalars and step values of one step.
template <class Float, class Args>
Args with_step(Args a, const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  a.params = stored("params");
  a.m = t.f32("m");
  a.v = t.f32("v");
  a.grads = stored("grads");
  a.N = t.shape().N;
  a.grad_norm = t.f32("grad_norm");
  a.lr = t.f32("lr");
  a.t = t.i32("t");
  a.beta1 = float(t.scalar("beta1"));
  a.beta2 = float(t.scalar("beta2"));
  a.eps = float(t.scalar("eps"));
  a.weight_decay = float(t.scalar("weight_decay"));
  a.grad_clip = float(t.scalar("grad_clip"));
  return a;
}

AdamwArgs adamw_args(const TensorTable& t) { return with_step<float>(AdamwArgs{}, t); }

AdamwBf16Args adamw_bf16_args(const TensorTable& t) {
  AdamwBf16Args a{};
  a.master = t.f32("master");
  a.seed = t.i32("seed");
  a.stochastic = int(t.scalar("stochastic"));
  return with_step<bf16>(a, t);
}

// For global_norm and its bf16 twin: Float is the storage of the gradients.
template <class Args, class Float>
Args global_norm_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {t.f32("out"), stored("grads"), t.shape().N};
}

ScalarSpec constant(std::string name, double value, std::string doc) {
  return {std::move(name), [value](const Shape&) { return value; }, std::move(doc)};
}

std::vector<ScalarSpec> adamw_scalars() {
  return {constant("beta1", 0.9, "first-moment decay"),
          constant("beta2", 0.999, "second-moment decay"),
          constant("eps", 1e-8, "added to sqrt(v_hat)"),
          constant("weight_decay", 0.1, "decoupled weight decay"),
          constant("grad_clip", 1.0, "the clipping norm: gradients scaled by min(1, grad_clip / (grad_norm + 1e-6))")};
}

// What changes from step to step, in device memory (contract/ops/adamw.h): the global
// gradient norm, below and above grad_clip (1.0) across seeds, so that both the clipped
// and the unclipped step are checked; the learning rate; the step number, from the first
// step (the largest bias corrections) to late ones.
std::vector<TensorSpec> step_values() {
  TensorSpec t = input("t", "1", Init::integers_in(1, 20000));
  t.dtype = DType::i32;
  return {input("grad_norm", "1", Init::uniform(0.25, 4.0)), input("lr", "1", Init::uniform(1e-4, 3e-3)), t};
}

// adamw_bf16's seed of the stochastic rounding, any 31-bit value.
TensorSpec rounding_seed() {
  TensorSpec s = input("seed", "1", Init::integers_in(0, int64_t(1) << 31));
  s.dtype = DType::i32;
  return s;
}

// The moments start where a few steps would have left them.
TensorSpec first_moment() { return inout("m", "N", ops::elementwise(1e-8, 1e-5), Init::uniform(-0.1, 0.1)); }
TensorSpec second_moment() { return inout("v", "N", ops::elementwise(1e-9, 1e-5), Init::uniform(0, 0.01)); }

// Every op of this file runs over the N parameters of the model.
const ops::Dims kParameters{{"N"}, {}};

}  // namespace

const OpSpec& adamw_op() {
  return ops::define("adamw", kParameters, &adamw_args, [](OpSpec& o) {
    o.summary =
        "AdamW step with bias correction and weight decay; gradients first scaled by the clipping scale of the global "
        "norm (read from device memory)";
    o.tensors = {inout("params", "N", ops::elementwise(1e-6, 1e-5)), first_moment(), second_moment(),
                 input("grads", "N")};
    for (TensorSpec& s : step_values()) o.tensors.push_back(std::move(s));
    o.scalars = adamw_scalars();
    o.flops = [](const Shape& s) { return 16.0 * s.N; };
  });
}

const OpSpec& adamw_bf16_op() {
  return ops::define("adamw_bf16", kParameters, &adamw_bf16_args, [](OpSpec& o) {
    o.summary =
        "AdamW step on fp32 master weights from bf16 gradients, the bf16 parameters written from them, rounded "
        "stochastically";
    o.own_truth = "the fp32 master weights, which no fp32 op has";
    ToleranceFn one_ulp = [](NumericClass c, const Shape& s) {  // either neighbour of the master weight
      Tolerance t = ops::elementwise(1e-6, 1e-5)(c, s);
      t.ulps += 1.0;
      return t;
    };
    o.tensors = {as_bf16(output("params", "N", one_ulp)), inout("master", "N", ops::elementwise(1e-6, 1e-5)),
                 first_moment(), second_moment(), as_bf16(input("grads", "N"))};
    for (TensorSpec& s : step_values()) o.tensors.push_back(std::move(s));
    o.tensors.push_back(rounding_seed());
    o.scalars = adamw_scalars();
    o.scalars.push_back(constant("stochastic", 1, "1: params rounded stochastically; 0: to nearest even"));
    o.flops = [](const Shape& s) { return 18.0 * s.N; };
  });
}

const OpSpec& global_norm_op() {
  return ops::define("global_norm", kParameters, &global_norm_args<GlobalNormArgs, float>, [](OpSpec& o) {
    o.summary = "L2 norm of all gradients: sqrt(sum grads^2)";
    o.tensors = {output("out", "1", ops::elementwise(0, 1e-4)), input("grads", "N")};
    o.flops = [](const Shape& s) { return 2.0 * s.N; };
  });
}

const OpSpec& global_norm_bf16_op() {
  return ops::twin_of<global_norm_op>("L2 norm of all gradients, from bf16 gradients, in fp32",
                                      &global_norm_args<GlobalNormBf16Args, bf16>, {"out"});
}

}  // namespace wb
