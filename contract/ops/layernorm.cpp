// Op definitions: layernorm_forward, layernorm_backward, fused_residual_layernorm_forward.
#include "contract/ops/common.h"
#include "contract/ops/fused_residual_layernorm_forward.h"
#include "contract/ops/layernorm_backward.h"
#include "contract/ops/layernorm_forward.h"

namespace wb {
namespace {

// For the ops and their bf16 twins: Float is the storage of every tensor but the
// statistics (mean, rstd), which are fp32 in both.
template <class Args, class Float>
Args forward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("out"),  t.f32("mean"), t.f32("rstd"), stored("inp"), stored("weight"),
          stored("bias"), stored.B,      stored.T,      stored.C};
}

template <class Args, class Float>
Args backward_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("dinp"), stored("dweight"), stored("dbias"), stored("dout"), stored("inp"), stored("weight"),
          t.f32("mean"),  t.f32("rstd"),     stored.B,        stored.T,       stored.C};
}

template <class Args, class Float>
Args fused_args(const TensorTable& t) {
  const ops::Stored<Float> stored{t};
  return {stored("residual"), stored("normed"), t.f32("mean"), t.f32("rstd"), stored("inp1"), stored("inp2"),
          stored("weight"),   stored("bias"),   stored.B,      stored.T,      stored.C};
}

// Statistics of a row of C values: the mean, and rstd (about 1.7 for uniform inputs).
std::vector<TensorSpec> statistics() {
  return {output("mean", "B,T", ops::elementwise(1e-6, 1e-5)), output("rstd", "B,T", ops::elementwise(1e-5, 1e-5))};
}

double elements(const Shape& s) { return double(s.B) * double(s.T) * double(s.C); }
double layernorm_flops(const Shape& s) { return 8.0 * elements(s); }

// The backward's mean and rstd are those of inp, as `forward` (layernorm_forward or its
// bf16 twin, Float its storage) saves them: it runs on inp with unit weight and zero bias.
template <class Float>
void saved_statistics(const OpSpec& forward, const TensorTable& t, const ReferenceRunner& run_reference) {
  const Shape& s = t.shape();
  const ops::Stored<Float> stored{t};
  std::vector<Float> scratch(s.B * s.T * s.C), weight(s.C, ops::in_storage<Float>(1.0f)),
      bias(s.C, ops::in_storage<Float>(0.0f));
  run_reference(forward, s, {scratch.data(), t.f32("mean"), t.f32("rstd"), stored("inp"), weight.data(), bias.data()});
}

const ops::ShapeCheck kInt32Limits = ops::int32_limits({"B", "T", "C", "B*T"});

}  // namespace

const OpSpec& layernorm_forward_op() {
  static const OpSpec op = [] {
    OpSpec o("layernorm_forward", "normalise every row of C channels (eps 1e-5), then scale and shift");
    o.dims = {"B", "T", "C"};
    o.shape_error = kInt32Limits;
    o.tensors = {output("out", "B,T,C", ops::elementwise(2e-5, 1e-5))};
    for (auto& t : statistics()) o.tensors.push_back(t);
    o.tensors.push_back(input("inp", "B,T,C"));
    o.tensors.push_back(input("weight", "C"));
    o.tensors.push_back(input("bias", "C"));
    o.flops = layernorm_flops;
    o.bind(&forward_args<LayernormForwardArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& layernorm_forward_bf16_op() {
  static const OpSpec op = ops::bf16_twin(
      layernorm_forward_op(), "layernorm_forward_bf16",
      "normalise every row of C channels (eps 1e-5), then scale and shift, on bf16 storage (statistics fp32)",
      &forward_args<LayernormForwardBf16Args, bf16>, {"mean", "rstd"});
  return op;
}

const OpSpec& layernorm_backward_op() {
  static const OpSpec op = [] {
    OpSpec o("layernorm_backward", "gradients of layernorm_forward from the saved mean and rstd (accumulated)");
    o.dims = {"B", "T", "C"};
    o.shape_error = kInt32Limits;
    o.tensors = {inout("dinp", "B,T,C", ops::summed_over("C")),
                 inout("dweight", "C", ops::summed_over_rows()),
                 inout("dbias", "C", ops::summed_over_rows()),
                 input("dout", "B,T,C"),
                 input("inp", "B,T,C"),
                 input("weight", "C"),
                 input("mean", "B,T"),
                 input("rstd", "B,T")};
    o.flops = [](const Shape& s) { return 14.0 * elements(s); };
    o.prepare = [](const TensorTable& t, const ReferenceRunner& run_reference) {
      saved_statistics<float>(layernorm_forward_op(), t, run_reference);
    };
    o.bind(&backward_args<LayernormBackwardArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& layernorm_backward_bf16_op() {
  static const OpSpec op = [] {
    OpSpec o = ops::bf16_twin(
        layernorm_backward_op(), "layernorm_backward_bf16",
        "gradients of layernorm_forward_bf16 from the saved fp32 mean and rstd, on bf16 storage (accumulated)",
        &backward_args<LayernormBackwardBf16Args, bf16>, {"mean", "rstd"});
    o.prepare = [](const TensorTable& t, const ReferenceRunner& run_reference) {
      saved_statistics<bf16>(layernorm_forward_bf16_op(), t, run_reference);
    };
    return o;
  }();
  return op;
}

const OpSpec& fused_residual_layernorm_forward_op() {
  static const OpSpec op = [] {
    OpSpec o("fused_residual_layernorm_forward", "residual = inp1 + inp2, then layernorm of the residual");
    o.dims = {"B", "T", "C"};
    o.shape_error = kInt32Limits;
    o.tensors = {output("residual", "B,T,C", ops::elementwise()),
                 output("normed", "B,T,C", ops::elementwise(2e-5, 1e-5))};
    for (auto& t : statistics()) o.tensors.push_back(t);
    o.tensors.push_back(input("inp1", "B,T,C"));
    o.tensors.push_back(input("inp2", "B,T,C"));
    o.tensors.push_back(input("weight", "C"));
    o.tensors.push_back(input("bias", "C"));
    o.flops = [](const Shape& s) { return layernorm_flops(s) + elements(s); };
    o.bind(&fused_args<FusedResidualLayernormForwardArgs, float>);
    return o;
  }();
  return op;
}

const OpSpec& fused_residual_layernorm_forward_bf16_op() {
  static const OpSpec op = [] {
    // The fp32 op's tensors on bf16 storage (statistics fp32), but no twin: the truth is
    // the layernorm of the residual as stored, which the fp32 reference never rounds.
    OpSpec o = ops::bf16_twin(
        fused_residual_layernorm_forward_op(), "fused_residual_layernorm_forward_bf16",
        "residual = bf16(inp1 + inp2), then layernorm of the stored residual, on bf16 storage (statistics fp32)",
        &fused_args<FusedResidualLayernormForwardBf16Args, bf16>, {"mean", "rstd"});
    o.fp32_twin.clear();
    o.own_truth = "the layernorm of the residual as stored in bf16, which no fp32 op rounds";
    return o;
  }();
  return op;
}

}  // namespace wb
