// Op definitions: adamw, global_norm. Both run over the N parameters of the model
// (by default GPT-2's count at the shape's V, C, L and T).
#include "kernels/ops/adamw.h"
#include "kernels/ops/common.h"
#include "kernels/ops/global_norm.h"

namespace wb {
namespace {

AdamwArgs adamw_args(const TensorTable& t) {
  return {t.f32("params"),
          t.f32("m"),
          t.f32("v"),
          t.f32("grads"),
          t.shape().N,
          float(t.scalar("lr")),
          float(t.scalar("beta1")),
          float(t.scalar("beta2")),
          float(t.scalar("eps")),
          float(t.scalar("weight_decay")),
          float(t.scalar("grad_scale")),
          int(t.scalar("t"))};
}

GlobalNormArgs global_norm_args(const TensorTable& t) { return {t.f32("out"), t.f32("grads"), t.shape().N}; }

ScalarSpec constant(std::string name, double value, std::string doc) {
  return {std::move(name), [value](const Shape&) { return value; }, std::move(doc)};
}

}  // namespace

const OpSpec& adamw_op() {
  static const OpSpec op = [] {
    OpSpec o("adamw", "AdamW step with bias correction and weight decay; gradients scaled by grad_scale first");
    o.dims = {"N"};
    o.tensors = {inout("params", "N", ops::elementwise(1e-6, 1e-5)),
                 inout("m", "N", ops::elementwise(1e-8, 1e-5), Init::uniform(-0.1, 0.1)),
                 inout("v", "N", ops::elementwise(1e-9, 1e-5), Init::uniform(0, 0.01)), input("grads", "N")};
    o.scalars = {constant("lr", 1e-3, "learning rate"),
                 constant("beta1", 0.9, "first-moment decay"),
                 constant("beta2", 0.999, "second-moment decay"),
                 constant("eps", 1e-8, "added to sqrt(v_hat)"),
                 constant("weight_decay", 0.1, "decoupled weight decay"),
                 constant("grad_scale", 0.5, "gradient multiplier from clipping"),
                 constant("t", 3, "step number, from 1")};
    o.flops = [](const Shape& s) { return 16.0 * s.N; };
    o.bind(&adamw_args);
    return o;
  }();
  return op;
}

const OpSpec& global_norm_op() {
  static const OpSpec op = [] {
    OpSpec o("global_norm", "L2 norm of all gradients: sqrt(sum grads^2)");
    o.dims = {"N"};
    o.tensors = {output("out", "1", ops::elementwise(0, 1e-4)), input("grads", "N")};
    o.flops = [](const Shape& s) { return 2.0 * s.N; };
    o.bind(&global_norm_args);
    return o;
  }();
  return op;
}

}  // namespace wb
