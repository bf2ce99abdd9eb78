// Op definitions: attention_forward, attention_backward, and their forms on bf16 storage.
#include <optional>

#include "contract/ops/attention_backward.h"
#include "contract/ops/attention_forward.h"
#include "contract/ops/common.h"

namespace wb {
namespace {

// For the ops and their bf16 twins: Float is the storage of every tensor but lse,
// which is fp32 in both.
template <class Args, class Float>
Args forward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("out"), t.f32("lse"), stored("qkv"), stored.B, stored.T, stored.C, stored.NH};
}

template <class Args, class Float>
Args backward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("dqkv"), stored("dout"), stored("qkv"), stored("out"), t.f32("lse"),
          stored.B,       stored.T,       stored.C,      stored.NH};
}

std::optional<std::string> heads_divide_channels(const Shape& s) {
  if (s.C % s.NH != 0)
    return "C=" + std::to_string(s.C) + " is not divisible by NH=" + std::to_string(s.NH) + " (give NH)";
  return std::nullopt;
}

// The kernels count heads (B*NH) in int as well, and address a row of qkv (3C).
const ops::ShapeCheck kShapeError =
    ops::all_of({heads_divide_channels, ops::int32_limits({"B", "T", "C", "NH", "B*T", "B*NH", "3*C"})});

// Causal: row t of a head attends to t + 1 positions, T(T+1)/2 pairs per head.
double causal_pairs_times_channels(const Shape& s) {
  return double(s.B) * double(s.T) * (double(s.T) + 1) / 2.0 * double(s.C);
}
double forward_flops(const Shape& s) { return 4.0 * causal_pairs_times_channels(s); }  // q.k and p*v
// Recomputed scores, dout.v, dq, dk and dv: five multiply-adds per pair and channel.
double backward_flops(const Shape& s) { return 10.0 * causal_pairs_times_channels(s); }

}  // namespace

const OpSpec& attention_forward_op() {
  static const OpSpec op = [] {
    OpSpec o("attention_forward", "causal multi-head self-attention over the fused qkv; writes out and lse");
    o.dims = {"B", "T", "C", "NH"};
    o.tensors = {output("out", "B,T,C", ops::elementwise(1e-5, 1e-4)),
                 output("lse", "B,NH,T", ops::elementwise(2e-5, 1e-5)), input("qkv", "B,T,3C")};
    o.shape_error = kShapeError;
    o.flops = forward_flops;
    o.bind(&forward_args<AttentionForwardArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& attention_backward_op() {
  static const OpSpec op = [] {
    OpSpec o("attention_backward", "dqkv from q, k, v, out, lse and dout; probabilities recomputed from lse");
    o.dims = {"B", "T", "C", "NH"};
    o.tensors = {output("dqkv", "B,T,3C", ops::summed_over("T")), input("dout", "B,T,C"), input("qkv", "B,T,3C"),
                 input("out", "B,T,C"), input("lse", "B,NH,T")};
    o.shape_error = kShapeError;
    o.flops = backward_flops;
    // out and lse are those of the forward pass on qkv.
    o.prepare = [](const TensorTable& t, const ReferenceRunner& run_reference) {
      run_reference(attention_forward_op(), t.shape(), {t.f32("out"), t.f32("lse"), t.f32("qkv")});
    };
    o.bind(&backward_args<AttentionBackwardArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& attention_forward_bf16_op() {
  static const OpSpec op = ops::bf16_twin(attention_forward_op(), "attention_forward_bf16",
                                          "causal multi-head self-attention on bf16 qkv and out, fp32 lse",
                                          &forward_args<AttentionForwardBf16Args, bf16>, {"lse"});
  return op;
}

const OpSpec& attention_backward_bf16_op() {
  static const OpSpec op = [] {
    OpSpec o = ops::bf16_twin(attention_backward_op(), "attention_backward_bf16",
                              "dqkv on bf16 storage from q, k, v, out, the fp32 lse and dout",
                              &backward_args<AttentionBackwardBf16Args, bf16>, {"lse"});
    // out and lse are those of the bf16 forward pass on qkv.
    o.prepare = [](const TensorTable& t, const ReferenceRunner& run_reference) {
      run_reference(attention_forward_bf16_op(), t.shape(), {t.bfloat16("out"), t.f32("lse"), t.bfloat16("qkv")});
    };
    return o;
  }();
  return op;
}

}  // namespace wb
