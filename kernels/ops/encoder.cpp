// Op definitions: encoder_forward, encoder_backward.
#include "kernels/ops/common.h"
#include "kernels/ops/encoder_backward.h"
#include "kernels/ops/encoder_forward.h"

namespace wb {
namespace {

EncoderForwardArgs forward_args(const TensorTable& t) {
  const Shape& s = t.shape();
  return {t.f32("out"), t.i32("inp"), t.f32("wte"), t.f32("wpe"), ops::as_int(s.B), ops::as_int(s.T), ops::as_int(s.C)};
}

EncoderForwardBf16Args forward_bf16_args(const TensorTable& t) {
  const Shape& s = t.shape();
  return {t.bfloat16("out"), t.i32("inp"),     t.bfloat16("wte"), t.bfloat16("wpe"),
          ops::as_int(s.B),  ops::as_int(s.T), ops::as_int(s.C)};
}

EncoderBackwardArgs backward_args(const TensorTable& t) {
  const Shape& s = t.shape();
  return {t.f32("dwte"),    t.f32("dwpe"),    t.f32("dout"),   t.i32("inp"),
          ops::as_int(s.B), ops::as_int(s.T), ops::as_int(s.C)};
}

EncoderBackwardBf16Args backward_bf16_args(const TensorTable& t) {
  const Shape& s = t.shape();
  return {t.bfloat16("dwte"), t.bfloat16("dwpe"), t.bfloat16("dout"), t.i32("inp"),
          ops::as_int(s.B),   ops::as_int(s.T),   ops::as_int(s.C)};
}

// Tokens are int32 below V.
const ops::ShapeCheck kInt32Limits = ops::int32_limits({"B", "T", "C", "V", "B*T"});
double rows(const Shape& s) { return double(s.B) * double(s.T); }
double forward_flops(const Shape& s) { return rows(s) * double(s.C); }
double backward_flops(const Shape& s) { return 2.0 * rows(s) * double(s.C); }
// dout and the tokens read once; the touched rows of dwte and all of dwpe read and written.
double backward_bytes(const Shape& s, double element) {
  return 4.0 * rows(s) + element * (3 * rows(s) * double(s.C) + 2 * double(s.T) * double(s.C));
}
// Only the gathered rows of wte are read, not all V of them: per row a token, the wte
// and wpe rows read and the output row written (wpe's T rows at least once).
double forward_bytes(const Shape& s, double element) {
  return 4.0 * rows(s) + element * (2 * rows(s) * double(s.C) + double(s.T) * double(s.C));
}

}  // namespace

const OpSpec& encoder_forward_op() {
  static const OpSpec op = [] {
    OpSpec o("encoder_forward", "token plus position embedding: out[b,t] = wte[inp[b,t]] + wpe[t]");
    o.dims = {"B", "T", "C", "V"};
    o.shape_error = kInt32Limits;
    o.tensors = {output("out", "B,T,C", ops::elementwise()), token_input("inp", "B,T"), input("wte", "V,C"),
                 input("wpe", "T,C")};
    o.flops = forward_flops;
    o.min_bytes = [](const Shape& s) { return forward_bytes(s, 4.0); };
    o.bind(&forward_args);
    return o;
  }();
  return op;
}

const OpSpec& encoder_forward_bf16_op() {
  static const OpSpec op = [] {
    OpSpec o("encoder_forward_bf16", "token plus position embedding, on bf16 storage");
    o.dims = {"B", "T", "C", "V"};
    o.fp32_twin = "encoder_forward";
    o.shape_error = kInt32Limits;
    o.tensors = {as_bf16(output("out", "B,T,C", ops::rounded_to_bf16(ops::elementwise()))), token_input("inp", "B,T"),
                 as_bf16(input("wte", "V,C")), as_bf16(input("wpe", "T,C"))};
    o.flops = forward_flops;
    o.min_bytes = [](const Shape& s) { return forward_bytes(s, 2.0); };
    o.bind(&forward_bf16_args);
    return o;
  }();
  return op;
}

const OpSpec& encoder_backward_op() {
  static const OpSpec op = [] {
    OpSpec o("encoder_backward", "scatter-add dout into the rows of dwte named by the tokens, and into dwpe");
    o.dims = {"B", "T", "C", "V"};
    o.shape_error = kInt32Limits;
    o.tensors = {inout("dwte", "V,C", ops::summed_over_rows()), inout("dwpe", "T,C", ops::summed_over("B")),
                 input("dout", "B,T,C"), token_input("inp", "B,T")};
    o.flops = backward_flops;
    o.min_bytes = [](const Shape& s) { return backward_bytes(s, 4.0); };
    o.bind(&backward_args);
    return o;
  }();
  return op;
}

const OpSpec& encoder_backward_bf16_op() {
  static const OpSpec op = [] {
    OpSpec o("encoder_backward_bf16", "encoder_backward's scatter-add on bf16 storage, each element rounded once");
    o.dims = {"B", "T", "C", "V"};
    o.fp32_twin = "encoder_backward";
    o.shape_error = kInt32Limits;
    o.tensors = {as_bf16(inout("dwte", "V,C", ops::rounded_to_bf16(ops::summed_over_rows()))),
                 as_bf16(inout("dwpe", "T,C", ops::rounded_to_bf16(ops::summed_over("B")))),
                 as_bf16(input("dout", "B,T,C")), token_input("inp", "B,T")};
    o.flops = backward_flops;
    o.min_bytes = [](const Shape& s) { return backward_bytes(s, 2.0); };
    o.bind(&backward_bf16_args);
    return o;
  }();
  return op;
}

}  // namespace wb
