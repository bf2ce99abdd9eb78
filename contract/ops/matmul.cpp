// Op definitions: matmul_forward, matmul_gelu_forward, matmul_backward,
// matmul_backward_bias, and the bf16 forms of matmul_forward, matmul_backward and
// matmul_backward_bias.
#include "contract/ops/common.h"
#include "contract/ops/matmul_backward.h"
#include "contract/ops/matmul_backward_bias.h"
#include "contract/ops/matmul_forward.h"
#include "contract/ops/matmul_gelu_forward.h"

namespace wb {
namespace {

// For the ops and their bf16 twins: Float is the storage of every tensor.
template <class Args, class Float>
Args forward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("out"), stored("inp"), stored("weight"), stored("bias"), stored.B, stored.T, stored.C, stored.OC};
}

template <class Args, class Float>
Args gelu_forward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("out"), stored("pre"), stored("inp"), stored("weight"), stored("bias"),
          stored.B,      stored.T,      stored.C,      stored.OC};
}

template <class Args, class Float>
Args backward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("dinp"), stored("dweight"), stored("dout"), stored("inp"), stored("weight"),
          stored.B,       stored.T,          stored.C,       stored.OC};
}

template <class Args, class Float>
Args bias_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("dbias"), stored("dout"), stored.B, stored.T, stored.OC};
}

const ops::ShapeCheck kInt32Limits = ops::int32_limits({"B", "T", "C", "OC", "B*T"});
double rows(const Shape& s) { return double(s.B) * double(s.T); }
double forward_flops(const Shape& s) { return 2.0 * rows(s) * double(s.C) * double(s.OC) + rows(s) * double(s.OC); }
double backward_flops(const Shape& s) { return 4.0 * rows(s) * double(s.C) * double(s.OC); }
double bias_flops(const Shape& s) { return rows(s) * double(s.OC); }
// the linear layer's flops as matmul_forward counts them, gelu's as gelu_forward does
double gelu_forward_flops(const Shape& s) {
  return 2.0 * rows(s) * double(s.C) * double(s.OC) + 11.0 * rows(s) * double(s.OC);
}
// gelu's slope lies within [-0.13, 1.13]: out inherits at most 1.13 times pre's error,
// plus gelu_forward's own few roundings.
ToleranceFn gelu_pre_tol() { return ops::summed_over("C"); }
ToleranceFn gelu_out_tol() {
  const ToleranceFn pre_tol = gelu_pre_tol();
  return [pre_tol](NumericClass c, const Shape& s) {
    Tolerance t = pre_tol(c, s);
    t.atol *= 1.25;
    return t;
  };
}

// The ops of this file read the linear layer's dims; matmul_backward_bias all but C,
// under the same limits.
const ops::Dims kLinear{{"B", "T", "C", "OC"}, kInt32Limits};
const ops::Dims kBias{{"B", "T", "OC"}, kInt32Limits};

}  // namespace

const OpSpec& matmul_forward_op() {
  return ops::define("matmul_forward", kLinear, &forward_args<MatmulForwardArgs, float>, [](OpSpec& o) {
    o.summary = "linear layer: out (B*T, OC) = inp (B*T, C) @ weight^T (C, OC) + bias";
    o.tensors = {output("out", "B,T,OC", ops::summed_over("C")), input("inp", "B,T,C"), input("weight", "OC,C"),
                 optional(input("bias", "OC"))};
    o.flops = forward_flops;
  });
}

const OpSpec& matmul_forward_bf16_op() {
  return ops::twin_of<matmul_forward_op>("linear layer on bf16 storage, fp32 accumulation: out = inp @ weight^T + bias",
                                         &forward_args<MatmulForwardBf16Args, bf16>);
}

const OpSpec& matmul_gelu_forward_op() {
  return ops::define("matmul_gelu_forward", kLinear, &gelu_forward_args<MatmulGeluForwardArgs, float>, [](OpSpec& o) {
    o.summary =
        "pre (B*T, OC) = inp @ weight^T + bias, out = gelu(pre): the MLP's first layer and its GELU, pre kept for the "
        "backward";
    o.tensors = {output("out", "B,T,OC", gelu_out_tol()), output("pre", "B,T,OC", gelu_pre_tol()),
                 input("inp", "B,T,C"), input("weight", "OC,C"), optional(input("bias", "OC"))};
    o.flops = gelu_forward_flops;
  });
}

const OpSpec& matmul_gelu_forward_bf16_op() {
  return ops::twin_of<matmul_gelu_forward_op>(
      "the MLP's first layer and its GELU on bf16 storage, fp32 accumulation; out from the unrounded pre",
      &gelu_forward_args<MatmulGeluForwardBf16Args, bf16>);
}

const OpSpec& matmul_backward_op() {
  return ops::define("matmul_backward", kLinear, &backward_args<MatmulBackwardArgs, float>, [](OpSpec& o) {
    o.summary =
        "dinp = dout @ weight (overwritten), dweight += dout^T @ inp; the bias gradient is matmul_backward_bias";
    o.tensors = {output("dinp", "B,T,C", ops::summed_over("OC")), inout("dweight", "OC,C", ops::summed_over_rows()),
                 input("dout", "B,T,OC"), input("inp", "B,T,C"), input("weight", "OC,C")};
    o.flops = backward_flops;
  });
}

const OpSpec& matmul_backward_bf16_op() {
  return ops::twin_of<matmul_backward_op>(
      "matmul_backward on bf16 storage, fp32 accumulation: dinp = dout @ weight, dweight += dout^T @ inp (old "
      "+ sum, rounded once)",
      &backward_args<MatmulBackwardBf16Args, bf16>);
}

const OpSpec& matmul_backward_bias_op() {
  return ops::define("matmul_backward_bias", kBias, &bias_args<MatmulBackwardBiasArgs, float>, [](OpSpec& o) {
    o.summary = "dbias += column sums of dout over the B*T rows";
    o.tensors = {inout("dbias", "OC", ops::summed_over_rows()), input("dout", "B,T,OC")};
    o.flops = bias_flops;
  });
}

const OpSpec& matmul_backward_bias_bf16_op() {
  return ops::twin_of<matmul_backward_bias_op>(
      "matmul_backward_bias on bf16 storage: dbias += fp32 column sums of dout (old + sum, rounded once)",
      &bias_args<MatmulBackwardBiasBf16Args, bf16>);
}

}  // namespace wb
