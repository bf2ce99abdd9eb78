// Op definitions: gelu_forward, gelu_backward, residual_forward (and on bf16 storage). They run over
// N = B*T*C values (in GPT-2's MLP, gelu sees C = 4*768).
#include "kernels/ops/common.h"
#include "kernels/ops/gelu_backward.h"
#include "kernels/ops/gelu_forward.h"
#include "kernels/ops/residual_forward.h"

namespace wb {
namespace {

// After check_shape, B*T*C is known to fit (it is the element count of out).
int64_t count(const Shape& s) { return s.B * s.T * s.C; }
double elements(const Shape& s) { return double(s.B) * double(s.T) * double(s.C); }

GeluForwardArgs gelu_forward_args(const TensorTable& t) { return {t.f32("out"), t.f32("inp"), count(t.shape())}; }

GeluBackwardArgs gelu_backward_args(const TensorTable& t) {
  return {t.f32("dinp"), t.f32("inp"), t.f32("dout"), count(t.shape())};
}

ResidualForwardArgs residual_args(const TensorTable& t) {
  return {t.f32("out"), t.f32("inp1"), t.f32("inp2"), count(t.shape())};
}

GeluForwardBf16Args gelu_forward_bf16_args(const TensorTable& t) {
  return {t.bfloat16("out"), t.bfloat16("inp"), count(t.shape())};
}

GeluBackwardBf16Args gelu_backward_bf16_args(const TensorTable& t) {
  return {t.bfloat16("dinp"), t.bfloat16("inp"), t.bfloat16("dout"), count(t.shape())};
}

ResidualForwardBf16Args residual_bf16_args(const TensorTable& t) {
  return {t.bfloat16("out"), t.bfloat16("inp1"), t.bfloat16("inp2"), count(t.shape())};
}

}  // namespace

const OpSpec& gelu_forward_op() {
  static const OpSpec op = [] {
    OpSpec o("gelu_forward", "GELU, tanh approximation, elementwise");
    o.dims = {"B", "T", "C"};
    o.tensors = {output("out", "B,T,C", ops::elementwise()), input("inp", "B,T,C", Init::uniform(-4, 4))};
    o.flops = [](const Shape& s) { return 10.0 * elements(s); };
    o.bind(&gelu_forward_args);
    return o;
  }();
  return op;
}

const OpSpec& gelu_backward_op() {
  static const OpSpec op = [] {
    OpSpec o("gelu_backward", "dinp = gelu'(inp) * dout, elementwise (written, not accumulated)");
    o.dims = {"B", "T", "C"};
    o.tensors = {output("dinp", "B,T,C", ops::elementwise()), input("inp", "B,T,C", Init::uniform(-4, 4)),
                 input("dout", "B,T,C")};
    o.flops = [](const Shape& s) { return 18.0 * elements(s); };
    o.bind(&gelu_backward_args);
    return o;
  }();
  return op;
}

const OpSpec& residual_forward_op() {
  static const OpSpec op = [] {
    OpSpec o("residual_forward", "out = inp1 + inp2, elementwise");
    o.dims = {"B", "T", "C"};
    o.tensors = {output("out", "B,T,C", ops::elementwise()), input("inp1", "B,T,C"), input("inp2", "B,T,C")};
    o.flops = [](const Shape& s) { return elements(s); };
    o.bind(&residual_args);
    return o;
  }();
  return op;
}

const OpSpec& residual_forward_bf16_op() {
  static const OpSpec op = [] {
    OpSpec o("residual_forward_bf16", "out = inp1 + inp2, elementwise, on bf16 storage");
    o.dims = {"B", "T", "C"};
    o.fp32_twin = "residual_forward";
    o.tensors = {as_bf16(output("out", "B,T,C", ops::rounded_to_bf16(ops::elementwise()))),
                 as_bf16(input("inp1", "B,T,C")), as_bf16(input("inp2", "B,T,C"))};
    o.flops = [](const Shape& s) { return elements(s); };
    o.bind(&residual_bf16_args);
    return o;
  }();
  return op;
}

const OpSpec& gelu_forward_bf16_op() {
  static const OpSpec op = [] {
    OpSpec o("gelu_forward_bf16", "GELU, tanh approximation, elementwise, on bf16 storage");
    o.dims = {"B", "T", "C"};
    o.fp32_twin = "gelu_forward";
    o.tensors = {as_bf16(output("out", "B,T,C", ops::rounded_to_bf16(ops::elementwise()))),
                 as_bf16(input("inp", "B,T,C", Init::uniform(-4, 4)))};
    o.flops = [](const Shape& s) { return 10.0 * elements(s); };
    o.bind(&gelu_forward_bf16_args);
    return o;
  }();
  return op;
}

const OpSpec& gelu_backward_bf16_op() {
  static const OpSpec op = [] {
    OpSpec o("gelu_backward_bf16", "dinp = gelu'(inp) * dout, elementwise, on bf16 storage (written)");
    o.dims = {"B", "T", "C"};
    o.fp32_twin = "gelu_backward";
    o.tensors = {as_bf16(output("dinp", "B,T,C", ops::rounded_to_bf16(ops::elementwise()))),
                 as_bf16(input("inp", "B,T,C", Init::uniform(-4, 4))), as_bf16(input("dout", "B,T,C"))};
    o.flops = [](const Shape& s) { return 18.0 * elements(s); };
    o.bind(&gelu_backward_bf16_args);
    return o;
  }();
  return op;
}

}  // namespace wb
