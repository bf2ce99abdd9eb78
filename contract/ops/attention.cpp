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

// The backward's out and lse are those of the forward pass on qkv, on the same storage
// Float.
template <class Float>
void forward_pass(const TensorTable& t, const ReferenceRunner& run_reference) {
  const OpSpec& forward = std::is_same_v<Float, bf16> ? attention_forward_bf16_op() : attention_forward_op();
  const ops::Stored<Float> stored{t};
  run_reference(forward, t.shape(), {stored("out"), t.f32("lse"), stored("qkv")});
}

// Both ops read the heads' dims, under the same checks.
const ops::Dims kHeads{{"B", "T", "C", "NH"}, kShapeError};

}  // namespace

const OpSpec& attention_forward_op() {
  return ops::define("attention_forward", kHeads, &forward_args<AttentionForwardArgs, float>, [](OpSpec& o) {
    o.summary = "causal multi-head self-attention over the fused qkv; writes out and lse";
    o.tensors = {output("out", "B,T,C", ops::elementwise(1e-5, 1e-4)),
                 output("lse", "B,NH,T", ops::elementwise(2e-5, 1e-5)), input("qkv", "B,T,3C")};
    o.flops = forward_flops;
  });
}

const OpSpec& attention_backward_op() {
  return ops::define("attention_backward", kHeads, &backward_args<AttentionBackwardArgs, float>, [](OpSpec& o) {
    o.summary = "dqkv from q, k, v, out, lse and dout; probabilities recomputed from lse";
    o.tensors = {output("dqkv", "B,T,3C", ops::summed_over("T")), input("dout", "B,T,C"), input("qkv", "B,T,3C"),
                 input("out", "B,T,C"), input("lse", "B,NH,T")};
    o.flops = backward_flops;
    o.prepare = forward_pass<float>;
  });
}

const OpSpec& attention_forward_bf16_op() {
  return ops::twin_of<attention_forward_op>("causal multi-head self-attention on bf16 qkv and out, fp32 lse",
                                            &forward_args<AttentionForwardBf16Args, bf16>, {"lse"});
}

const OpSpec& attention_backward_bf16_op() {
  return ops::twin_of<attention_backward_op>("dqkv on bf16 storage from q, k, v, out, the fp32 lse and dout",
                                             &backward_args<AttentionBackwardBf16Args, bf16>, {"lse"},
                                             [](OpSpec& o) { o.prepare = forward_pass<bf16>; });
}

}  // namespace wb
