// Op definitions: gelu_forward, gelu_backward, residual_forward (and on bf16 storage). They run over
// N = B*T*C values (in GPT-2's MLP, gelu sees C = 4*768).
#include "contract/ops/common.h"
#include "contract/ops/gelu_backward.h"
#include "contract/ops/gelu_forward.h"
#include "contract/ops/residual_forward.h"

namespace wb {
namespace {

// After check_shape, B*T*C is known to fit (it is the element count of out).
int64_t count(const Shape& s) { return s.B * s.T * s.C; }
double elements(const Shape& s) { return double(s.B) * double(s.T) * double(s.C); }

// For the ops and their bf16 twins: Float is the storage of every tensor.
template <class Args, class Float>
Args gelu_forward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("out"), stored("inp"), count(t.shape())};
}

template <class Args, class Float>
Args gelu_backward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("dinp"), stored("inp"), stored("dout"), count(t.shape())};
}

template <class Args, class Float>
Args residual_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("out"), stored("inp1"), stored("inp2"), count(t.shape())};
}

}  // namespace

const OpSpec& gelu_forward_op() {
  static const OpSpec op = [] {
    OpSpec o("gelu_forward", "GELU, tanh approximation, elementwise");
    o.dims = {"B", "T", "C"};
    o.tensors = {output("out", "B,T,C", ops::elementwise()), input("inp", "B,T,C", Init::uniform(-4, 4))};
    o.flops = [](const Shape& s) { return 10.0 * elements(s); };
    o.bind(&gelu_forward_args<GeluForwardArgs, float>);
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
    o.bind(&gelu_backward_args<GeluBackwardArgs, float>);
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
    o.bind(&residual_args<ResidualForwardArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& residual_forward_bf16_op() {
  static const OpSpec op =
      ops::bf16_twin(residual_forward_op(), "residual_forward_bf16", "out = inp1 + inp2, elementwise, on bf16 storage",
                     &residual_args<ResidualForwardBf16Args, bf16>);
  return op;
}

const OpSpec& gelu_forward_bf16_op() {
  static const OpSpec op =
      ops::bf16_twin(gelu_forward_op(), "gelu_forward_bf16", "GELU, tanh approximation, elementwise, on bf16 storage",
                     &gelu_forward_args<GeluForwardBf16Args, bf16>);
  return op;
}

const OpSpec& gelu_backward_bf16_op() {
  static const OpSpec op = ops::bf16_twin(gelu_backward_op(), "gelu_backward_bf16",
                                          "dinp = gelu'(inp) * dout, elementwise, on bf16 storage (written)",
                                          &gelu_backward_args<GeluBackwardBf16Args, bf16>);
  return op;
}

}  // namespace wb
