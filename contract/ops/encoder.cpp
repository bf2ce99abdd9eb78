// Op definitions: encoder_forward, encoder_backward.
#include "contract/ops/common.h"
#include "contract/ops/encoder_backward.h"
#include "contract/ops/encoder_forward.h"

namespace wb {
namespace {

// For the ops and their bf16 twins: Float is the storage of every tensor but the
// tokens.
template <class Args, class Float>
Args forward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("out"), t.i32("inp"), stored("wte"), stored("wpe"), stored.B, stored.T, stored.C};
}

template <class Args, class Float>
Args backward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("dwte"), stored("dwpe"), stored("dout"), t.i32("inp"), stored.B, stored.T, stored.C};
}

// Tokens are int32 below V.
const ops::ShapeCheck kInt32Limits = ops::int32_limits({"B", "T", "C", "V", "B*T"});
double rows(const Shape& s) { return double(s.B) * double(s.T); }
double forward_flops(const Shape& s) { return rows(s) * double(s.C); }
double backward_flops(const Shape& s) { return 2.0 * rows(s) * double(s.C); }
// dout and the tokens read once; the touched rows of dwte and all of dwpe read and
// written; Float the storage of all but the tokens.
template <class Float>
double backward_bytes(const Shape& s) {
  return 4.0 * rows(s) + double(sizeof(Float)) * (3 * rows(s) * double(s.C) + 2 * double(s.T) * double(s.C));
}
// Only the gathered rows of wte are read, not all V of them: per row a token, the wte
// and wpe rows read and the output row written (wpe's T rows at least once).
template <class Float>
double forward_bytes(const Shape& s) {
  return 4.0 * rows(s) + double(sizeof(Float)) * (2 * rows(s) * double(s.C) + double(s.T) * double(s.C));
}

// Both ops read the embedding's dims.
const ops::Dims kEmbedding{{"B", "T", "C", "V"}, kInt32Limits};

}  // namespace

const OpSpec& encoder_forward_op() {
  return ops::define("encoder_forward", kEmbedding, &forward_args<EncoderForwardArgs, float>, [](OpSpec& o) {
    o.summary = "token plus position embedding: out[b,t] = wte[inp[b,t]] + wpe[t]";
    o.tensors = {output("out", "B,T,C", ops::elementwise()), token_input("inp", "B,T"), input("wte", "V,C"),
                 input("wpe", "T,C")};
    o.flops = forward_flops;
    o.min_bytes = forward_bytes<float>;
  });
}

const OpSpec& encoder_forward_bf16_op() {
  return ops::twin_of<encoder_forward_op>("token plus position embedding, on bf16 storage",
                                          &forward_args<EncoderForwardBf16Args, bf16>, {},
                                          [](OpSpec& o) { o.min_bytes = forward_bytes<bf16>; });
}

const OpSpec& encoder_backward_op() {
  return ops::define("encoder_backward", kEmbedding, &backward_args<EncoderBackwardArgs, float>, [](OpSpec& o) {
    o.summary = "scatter-add dout into the rows of dwte named by the tokens, and into dwpe";
    o.tensors = {inout("dwte", "V,C", ops::summed_over_rows()), inout("dwpe", "T,C", ops::summed_over("B")),
                 input("dout", "B,T,C"), token_input("inp", "B,T")};
    o.flops = backward_flops;
    o.min_bytes = backward_bytes<float>;
  });
}

const OpSpec& encoder_backward_bf16_op() {
  return ops::twin_of<encoder_backward_op>("encoder_backward's scatter-add on bf16 storage, each element rounded once",
                                           &backward_args<EncoderBackwardBf16Args, bf16>, {},
                                           [](OpSpec& o) { o.min_bytes = backward_bytes<bf16>; });
}

}  // namespace wb
