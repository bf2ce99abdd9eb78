// The step's workloads are its own op calls, recorded (trainer/gpt2.h, step_workloads):
// the counts that GPT-2's step implies, derived here from the number of layers, in
// both storages; a recording that allocates nothing; and a launched step that makes
// exactly the calls recorded.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "contract/registry.h"
#include "trainer/gpt2.h"
#include "trainer/model.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/kernel_plan.h"
#include "workbench/runtime/workloads.h"

namespace wb::trainer {
namespace {

// A small model whose matmul widths (C, 3C, 4C, Vp) all differ, so that every call
// site of the step has a shape of its own.
Config small_config(int L) {
  Config c = config_from_init(std::to_string(L) + ",64,4");
  c.V = 200, c.Vp = 320, c.maxT = 16;
  return c;
}

Shape matmul(int B, int T, int C, int OC) {
  Shape s;
  s.B = B, s.T = T, s.C = C, s.OC = OC;
  return s;
}

Shape bias(int B, int T, int OC) {
  Shape s;
  s.B = B, s.T = T, s.OC = OC;
  return s;
}

// The calls per step of op at every shape, and at one.
int calls_of(const std::vector<Workload>& w, const std::string& op) {
  int n = 0;
  for (const Workload& x : w)
    if (x.op == op) n += x.calls;
  return n;
}

int calls_at(const std::vector<Workload>& w, const std::string& op, const Shape& shape) {
  for (const Workload& x : w)
    if (x.op == op && x.shape == shape) return x.calls;
  return 0;
}

// What a GPT-2 step of L layers calls: the encoder and the first layernorm (every later
// one is fused with the residual: two per layer, the last the final layernorm); per
// layer the qkv, attention projection and MLP projection matmuls and the MLP's first
// matmul fused with its GELU; the classifier's matmul (tied to wte, no bias) and the
// fused classifier. Backward: every matmul's backward, a bias backward for each of the
// four with a bias, a layernorm backward per layernorm, GELU, attention and encoder
// backward; then the norm and AdamW.
std::map<std::string, int> expected_calls(int L) {
  return {{"encoder_forward", 1},
          {"layernorm_forward", 1},
          {"matmul_forward", 3 * L + 1},
          {"attention_forward", L},
          {"fused_residual_layernorm_forward", 2 * L},
          {"matmul_gelu_forward", L},
          {"fused_classifier", 1},
          {"matmul_backward", 4 * L + 1},
          {"matmul_backward_bias", 4 * L},
          {"layernorm_backward", 2 * L + 1},
          {"gelu_backward", L},
          {"attention_backward", L},
          {"encoder_backward", 1},
          {"global_norm", 1},
          {"adamw", 1}};
}

TEST(StepWorkloads, CountsAreThoseTheLayersImplyInBothStorages) {
  const int B = 2, T = 8;
  for (const int L : {1, 3}) {
    const Config c = small_config(L);
    const int C = c.C;
    for (const Storage storage : {Storage::fp32, Storage::bf16}) {
      SCOPED_TRACE("L=" + std::to_string(L) + (storage == Storage::bf16 ? " bf16" : " fp32"));
      const std::string s = op_suffix(storage);
      const std::vector<Workload> w = step_workloads(c, B, T, storage);
      std::map<std::string, int> per_op;
      for (const Workload& x : w) per_op[x.op] += x.calls;
      std::map<std::string, int> expected;
      for (const auto& [op, n] : expected_calls(L)) expected[op + s] = n;
      EXPECT_EQ(per_op, expected);
      // Each (op, shape) once, in the order of the step's first call to it.
      for (std::size_t i = 0; i < w.size(); ++i)
        for (std::size_t j = i + 1; j < w.size(); ++j)
          EXPECT_FALSE(w[i].op == w[j].op && w[i].shape == w[j].shape) << w[i].op << " listed twice";
      ASSERT_FALSE(w.empty());
      EXPECT_EQ(w.front().op, "encoder_forward" + s);
      EXPECT_EQ(w.back().op, "adamw" + s);
      // The matmuls by width: per layer C -> 3C, C -> C, 4C -> C, and the classifier.
      EXPECT_EQ(calls_at(w, "matmul_forward" + s, matmul(B, T, C, 3 * C)), L);
      EXPECT_EQ(calls_at(w, "matmul_forward" + s, matmul(B, T, C, C)), L);
      EXPECT_EQ(calls_at(w, "matmul_forward" + s, matmul(B, T, 4 * C, C)), L);
      EXPECT_EQ(calls_at(w, "matmul_forward" + s, matmul(B, T, C, c.Vp)), 1);
      EXPECT_EQ(calls_at(w, "matmul_gelu_forward" + s, matmul(B, T, C, 4 * C)), L);
      EXPECT_EQ(calls_at(w, "matmul_backward" + s, matmul(B, T, C, 4 * C)), L);
      EXPECT_EQ(calls_at(w, "matmul_backward" + s, matmul(B, T, C, c.Vp)), 1);
      EXPECT_EQ(calls_at(w, "matmul_backward_bias" + s, bias(B, T, C)), 2 * L);  // attention and MLP projections
      EXPECT_EQ(calls_at(w, "matmul_backward_bias" + s, bias(B, T, 3 * C)), L);
      EXPECT_EQ(calls_at(w, "matmul_backward_bias" + s, bias(B, T, 4 * C)), L);
    }
  }
}

// Two call sites of one op at one shape are one workload, with both counts: here the
// classifier's matmul_backward (C -> Vp) and the MLP's (C -> 4C) when Vp = 4C. (The
// table the recording replaced listed such a shape twice; the plan ran and timed every
// call of it under the first row, and the second row's count was never run.)
TEST(StepWorkloads, CallSitesOfOneShapeAreOneWorkload) {
  Config c = small_config(2);
  c.C = 32, c.NH = 2, c.Vp = 128;
  const std::vector<Workload> w = step_workloads(c, 2, 8, Storage::fp32);
  int rows = 0;
  for (const Workload& x : w) rows += x.op == "matmul_backward" && x.shape == matmul(2, 8, 32, 128);
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(calls_at(w, "matmul_backward", matmul(2, 8, 32, 128)), c.L + 1);
  EXPECT_EQ(calls_of(w, "matmul_backward"), 4 * c.L + 1);
}

// The recording allocates nothing and launches nothing: it takes no executor and no
// plan, and a model whose buffers no machine could hold (GPT-2 with 96 layers of
// width 12288 at B=1024, T=1024: petabytes of activations) records its step all the
// same.
TEST(StepWorkloads, RecordingAModelNoMachineCouldHoldAllocatesNothing) {
  const Config c = config_from_init("96,12288,96");
  const std::vector<Workload> w = step_workloads(c, 1024, 1024, Storage::bf16);
  EXPECT_EQ(calls_of(w, "matmul_forward_bf16"), 3 * 96 + 1);
  EXPECT_EQ(calls_of(w, "layernorm_backward_bf16"), 2 * 96 + 1);
}

// A launching model makes exactly the recorded calls: the plan built from them runs
// every call of a real step (a call it has no selection for throws), and its markers
// count as many timed calls as the workloads hold.
TEST(StepWorkloads, ALaunchedStepMakesTheRecordedCalls) {
  const Config c = small_config(2);
  const int B = 2, T = 8;
  for (const Storage storage : {Storage::fp32, Storage::bf16}) {
    SCOPED_TRACE(storage == Storage::bf16 ? "bf16" : "fp32");
    const std::vector<Workload> w = step_workloads(c, B, T, storage);
    int recorded = 0;
    for (const Workload& x : w) recorded += x.calls;
    auto ex = make_executor(Backend::cpu);
    PlanOptions options;
    options.precision = storage == Storage::bf16 ? NumericClass::bf16 : NumericClass::fp32;
    std::ostringstream notices;
    KernelPlan plan(Registry::global(), *ex, options, nullptr, w, notices);
    auto model = make_gpt2(c, B, T, *ex, plan, storage);
    model->load_params(init_params(c, 1).data());
    std::vector<int32_t> tokens(B * T);
    for (int i = 0; i < B * T; ++i) tokens[i] = (7 * i) % c.V;
    plan.begin_op_times();
    model->forward(tokens.data(), tokens.data());
    model->backward();
    model->update(UpdateSettings{});
    EXPECT_EQ(int(plan.timed_calls()), recorded);
    plan.collect_op_times();
  }
}

}  // namespace
}  // namespace wb::trainer
