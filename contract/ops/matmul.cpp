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

}  // namespace

const OpSpec& matmul_forward_op() {
  static const OpSpec op = [] {
    OpSpec o("matmul_forward", "linear layer: out (B*T, OC) = inp (B*T, C) @ weight^T (C, OC) + bias");
    o.dims = {"B", "T", "C", "OC"};
    o.shape_error = kInt32Limits;
    o.tensors = {output("out", "B,T,OC", ops::summed_over("C")), input("inp", "B,T,C"), input("weight", "OC,C"),
                 optional(input("bias", "OC"))};
    o.flops = forward_flops;
    o.bind(&forward_args<MatmulForwardArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& matmul_forward_bf16_op() {
  static const OpSpec op =
      ops::bf16_twin(matmul_forward_op(), "matmul_forward_bf16",
                     "linear layer on bf16 storage, fp32 accumulation: out = inp @ weight^T + bias",
                     &forward_args<MatmulForwardBf16Args, bf16>);
  return op;
}

const OpSpec& matmul_gelu_forward_op() {
  static const OpSpec op = [] {
    OpSpec o("matmul_gelu_forward",
             "pre (B*T, OC) = inp @ weight^T + bias, out = gelu(pre): the MLP's first layer and its GELU, pre kept "
             "for the backward");
    o.dims = {"B", "T", "C", "OC"};
    o.shape_error = kInt32Limits;
    o.tensors = {output("out", "B,T,OC", gelu_out_tol()), output("pre", "B,T,OC", gelu_pre_tol()),
                 input("inp", "B,T,C"), input("weight", "OC,C"), optional(input("bias", "OC"))};
    o.flops = gelu_forward_flops;
    o.bind(&gelu_forward_args<MatmulGeluForwardArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& matmul_gelu_forward_bf16_op() {
  static const OpSpec op = ops::bf16_twin(
      matmul_gelu_forward_op(), "matmul_gelu_forward_bf16",
      "the MLP's first layer and its GELU on bf16 storage, fp32 accumulation; out from the unrounded pre",
      &gelu_forward_args<MatmulGeluForwardBf16Args, bf16>);
  return op;
}

const OpSpec& matmul_backward_op() {
  static const OpSpec op = [] {
    OpSpec o("matmul_backward",
             "dinp = dout @ weight (overwritten), dweight += dout^T @ inp; the bias gradient is matmul_backward_bias");
    o.dims = {"B", "T", "C", "OC"};
    o.shape_error = kInt32Limits;
    o.tensors = {output("dinp", "B,T,C", ops::summed_over("OC")), inout("dweight", "OC,C", ops::summed_over_rows()),
                 input("dout", "B,T,OC"), input("inp", "B,T,C"), input("weight", "OC,C")};
    o.flops = backward_flops;
    o.bind(&backward_args<MatmulBackwardArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& matmul_backward_bf16_op() {
  static const OpSpec op = ops::bf16_twin(
      matmul_backward_op(), "matmul_backward_bf16",
      "matmul_backward on bf16 storage, fp32 accumulation: dinp = dout @ weight, dweight += dout^T @ inp (old "
      "+ sum, rounded once)",
      &backward_args<MatmulBackwardBf16Args, bf16>);
  return op;
}

const OpSpec& matmul_backward_bias_op() {
  static const OpSpec op = [] {
    OpSpec o("matmul_backward_bias", "dbias += column sums of dout over the B*T rows");
    o.dims = {"B", "T", "OC"};
    o.shape_error = kInt32Limits;
    o.tensors = {inout("dbias", "OC", ops::summed_over_rows()), input("dout", "B,T,OC")};
    o.flops = bias_flops;
    o.bind(&bias_args<MatmulBackwardBiasArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& matmul_backward_bias_bf16_op() {
  static const OpSpec op = ops::bf16_twin(
      matmul_backward_bias_op(), "matmul_backward_bias_bf16",
      "matmul_backward_bias on bf16 storage: dbias += fp32 column sums of dout (old + sum, rounded once)",
      &bias_args<MatmulBackwardBiasBf16Args, bf16>);
  return op;
}

}  // namespace wb
