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

// A layernorm's tensors: `outputs`, the statistics of each row of C values (the mean,
// and rstd: about 1.7 for uniform inputs), `inputs`, then the weight and bias of the C
// channels.
std::vector<TensorSpec> normalising(std::vector<TensorSpec> outputs, const std::vector<TensorSpec>& inputs) {
  outputs.push_back(output("mean", "B,T", ops::elementwise(1e-6, 1e-5)));
  outputs.push_back(output("rstd", "B,T", ops::elementwise(1e-5, 1e-5)));
  for (const TensorSpec& t : inputs) outputs.push_back(t);
  outputs.push_back(input("weight", "C"));
  outputs.push_back(input("bias", "C"));
  return outputs;
}

double elements(const Shape& s) { return double(s.B) * double(s.T) * double(s.C); }
double layernorm_flops(const Shape& s) { return 8.0 * elements(s); }

// The backward's mean and rstd are those of inp, as the forward op on the same storage
// Float saves them: it runs on inp with unit weight and zero bias.
template <class Float>
void saved_statistics(const TensorTable& t, const ReferenceRunner& run_reference) {
  const OpSpec& forward = std::is_same_v<Float, bf16> ? layernorm_forward_bf16_op() : layernorm_forward_op();
  const Shape& s = t.shape();
  const ops::Stored<Float> stored{t};
  std::vector<Float> scratch(s.B * s.T * s.C), weight(s.C, ops::in_storage<Float>(1.0f)),
      bias(s.C, ops::in_storage<Float>(0.0f));
  run_reference(forward, s, {scratch.data(), t.f32("mean"), t.f32("rstd"), stored("inp"), weight.data(), bias.data()});
}

const ops::ShapeCheck kInt32Limits = ops::int32_limits({"B", "T", "C", "B*T"});

// Every op of this file reads rows of C channels.
const ops::Dims kRows{{"B", "T", "C"}, kInt32Limits};

}  // namespace

const OpSpec& layernorm_forward_op() {
  return ops::define("layernorm_forward", kRows, &forward_args<LayernormForwardArgs, float>, [](OpSpec& o) {
    o.summary = "normalise every row of C channels (eps 1e-5), then scale and shift";
    o.tensors = normalising({output("out", "B,T,C", ops::elementwise(2e-5, 1e-5))}, {input("inp", "B,T,C")});
    o.flops = layernorm_flops;
  });
}

const OpSpec& layernorm_forward_bf16_op() {
  return ops::twin_of<layernorm_forward_op>(
      "normalise every row of C channels (eps 1e-5), then scale and shift, on bf16 storage (statistics fp32)",
      &forward_args<LayernormForwardBf16Args, bf16>, {"mean", "rstd"});
}

const OpSpec& layernorm_backward_op() {
  return ops::define("layernorm_backward", kRows, &backward_args<LayernormBackwardArgs, float>, [](OpSpec& o) {
    o.summary = "gradients of layernorm_forward from the saved mean and rstd (accumulated)";
    o.tensors = {inout("dinp", "B,T,C", ops::summed_over("C")),
                 inout("dweight", "C", ops::summed_over_rows()),
                 inout("dbias", "C", ops::summed_over_rows()),
                 input("dout", "B,T,C"),
                 input("inp", "B,T,C"),
                 input("weight", "C"),
                 input("mean", "B,T"),
                 input("rstd", "B,T")};
    o.flops = [](const Shape& s) { return 14.0 * elements(s); };
    o.prepare = saved_statistics<float>;
  });
}

const OpSpec& layernorm_backward_bf16_op() {
  return ops::twin_of<layernorm_backward_op>(
      "gradients of layernorm_forward_bf16 from the saved fp32 mean and rstd, on bf16 storage (accumulated)",
      &backward_args<LayernormBackwardBf16Args, bf16>, {"mean", "rstd"},
      [](OpSpec& o) { o.prepare = saved_statistics<bf16>; });
}

const OpSpec& fused_residual_layernorm_forward_op() {
  return ops::define(
      "fused_residual_layernorm_forward", kRows, &fused_args<FusedResidualLayernormForwardArgs, float>, [](OpSpec& o) {
        o.summary = "residual = inp1 + inp2, then layernorm of the residual";
        o.tensors = normalising(
            {output("residual", "B,T,C", ops::elementwise()), output("normed", "B,T,C", ops::elementwise(2e-5, 1e-5))},
            {input("inp1", "B,T,C"), input("inp2", "B,T,C")});
        o.flops = [](const Shape& s) { return layernorm_flops(s) + elements(s); };
      });
}

// The fp32 op's tensors on bf16 storage (statistics fp32), but no twin: the truth is the
// layernorm of the residual as stored, which the fp32 reference never rounds.
const OpSpec& fused_residual_layernorm_forward_bf16_op() {
  return ops::twin_of<fused_residual_layernorm_forward_op>(
      "residual = bf16(inp1 + inp2), then layernorm of the stored residual, on bf16 storage (statistics fp32)",
      &fused_args<FusedResidualLayernormForwardBf16Args, bf16>, {"mean", "rstd"}, [](OpSpec& o) {
        o.fp32_twin.clear();
        o.own_truth = "the layernorm of the residual as stored in bf16, which no fp32 op rounds";
      });
}

}  // namespace wb
