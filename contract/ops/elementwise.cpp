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

// The ops of this file run over the B*T*C values, any shape.
const ops::Dims kElements{{"B", "T", "C"}, {}};

// Their flop model: `flops` per value.
std::function<double(const Shape&)> per_element(double flops) {
  return [flops](const Shape& s) { return flops * elements(s); };
}

}  // namespace

const OpSpec& gelu_forward_op() {
  return ops::define("gelu_forward", kElements, &gelu_forward_args<GeluForwardArgs, float>, [](OpSpec& o) {
    o.summary = "GELU, tanh approximation, elementwise";
    o.tensors = {output("out", "B,T,C", ops::elementwise()), input("inp", "B,T,C", Init::uniform(-4, 4))};
    o.flops = per_element(10.0);
  });
}

const OpSpec& gelu_backward_op() {
  return ops::define("gelu_backward", kElements, &gelu_backward_args<GeluBackwardArgs, float>, [](OpSpec& o) {
    o.summary = "dinp = gelu'(inp) * dout, elementwise (written, not accumulated)";
    o.tensors = {output("dinp", "B,T,C", ops::elementwise()), input("inp", "B,T,C", Init::uniform(-4, 4)),
                 input("dout", "B,T,C")};
    o.flops = per_element(18.0);
  });
}

const OpSpec& residual_forward_op() {
  return ops::define("residual_forward", kElements, &residual_args<ResidualForwardArgs, float>, [](OpSpec& o) {
    o.summary = "out = inp1 + inp2, elementwise";
    o.tensors = {output("out", "B,T,C", ops::elementwise()), input("inp1", "B,T,C"), input("inp2", "B,T,C")};
    o.flops = per_element(1.0);
  });
}

const OpSpec& residual_forward_bf16_op() {
  return ops::twin_of<residual_forward_op>("out = inp1 + inp2, elementwise, on bf16 storage",
                                           &residual_args<ResidualForwardBf16Args, bf16>);
}

const OpSpec& gelu_forward_bf16_op() {
  return ops::twin_of<gelu_forward_op>("GELU, tanh approximation, elementwise, on bf16 storage",
                                       &gelu_forward_args<GeluForwardBf16Args, bf16>);
}

const OpSpec& gelu_backward_bf16_op() {
  return ops::twin_of<gelu_backward_op>("dinp = gelu'(inp) * dout, elementwise, on bf16 storage (written)",
                                        &gelu_backward_args<GeluBackwardBf16Args, bf16>);
}

}  // namespace wb
