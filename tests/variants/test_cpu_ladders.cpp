// The CPU ladders of the training step's ops (variants/<op>/cpu_NN_*.cpp, above each
// op's reference): their ids and names, the `threads` launch parameter every rung
// declares, their workspaces, results that do not depend on the thread count, and the
// corners the check shapes do not reach (GELU far from the origin, residual_forward
// in place). `wb check --all --backend cpu` (ctest check_all_cpu) checks every rung
// against its reference on every check shape.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "contract/cpu_capabilities.h"
#include "contract/ops/encoder_backward.h"
#include "contract/ops/gelu_backward.h"
#include "contract/ops/gelu_forward.h"
#include "contract/ops/residual_forward.h"
#include "contract/registry.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/target.h"
#include "reference/reference.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/problem.h"
#include "tests/support/ladder.h"

namespace wb {
namespace {

// op -> the names of its CPU variants 1, 2, ... (1 is the reference).
const std::map<std::string, std::vector<std::string>>& ladders() {
  static const std::map<std::string, std::vector<std::string>> table{
      {"gelu_forward", {"reference", "float_tanhf", "simd_sigmoid", "avx2_fma"}},
      {"gelu_backward", {"reference", "float_tanhf", "simd_sigmoid", "avx2_fma"}},
      {"adamw", {"reference", "simd_float"}},
      {"fused_classifier", {"reference", "exp_once", "simd_exp", "avx2_fma"}},
      {"layernorm_forward", {"reference", "simd_rows"}},
      {"layernorm_backward", {"reference", "row_blocks"}},
      {"global_norm", {"reference", "chunked_simd"}},
      {"encoder_forward", {"reference", "simd_rows"}},
      {"encoder_backward", {"reference", "channel_strips"}},
      {"fused_residual_layernorm_forward", {"reference", "simd_rows"}},
      {"matmul_backward_bias", {"reference", "column_strips"}},
      {"residual_forward", {"reference", "simd_chunks"}},
      {"softmax_forward", {"reference", "exp_once", "simd_exp", "avx2_fma"}},
      {"crossentropy_softmax_backward", {"reference", "simd_rows"}},
      // bf16 storage: the reference port, then one rung modelled on the fp32 op's.
      {"residual_forward_bf16", {"reference", "simd_chunks"}},
      {"gelu_forward_bf16", {"reference", "simd_sigmoid"}},
      {"gelu_backward_bf16", {"reference", "simd_sigmoid"}},
      {"layernorm_forward_bf16", {"reference", "simd_rows"}},
      {"fused_residual_layernorm_forward_bf16", {"reference", "simd_rows"}},
      {"encoder_forward_bf16", {"reference", "simd_rows"}},
      {"adamw_bf16", {"reference", "simd_float"}},
      {"global_norm_bf16", {"reference", "chunked_simd"}},
      {"fused_classifier_bf16", {"reference", "simd_exp"}},
      {"layernorm_backward_bf16", {"reference", "row_blocks"}},
      {"encoder_backward_bf16", {"reference", "token_runs"}},
      {"matmul_backward_bias_bf16", {"reference", "column_strips"}},
  };
  return table;
}

// The rungs above the references; only those this CPU can run, with `runnable` (the
// avx2_fma rungs skip CPUs without AVX2 and FMA).
std::vector<const Variant*> rungs(bool runnable = false) {
  std::vector<const Variant*> out;
  for (const auto& [op, names] : ladders())
    for (const Variant* v : testing::wb_rungs(Registry::global(), op, Backend::cpu))
      if (v->id > 1 && !(runnable && v->skip_reason(Shape{}, v->default_params()))) out.push_back(v);
  return out;
}

ParamValues threads(int n) { return ParamValues{{"threads", n}}; }

TEST(CpuLadders, EveryLadderHasItsIdsAndNames) {
  for (const auto& [op, names] : ladders()) {
    const auto variants = testing::wb_rungs(Registry::global(), op, Backend::cpu);
    ASSERT_EQ(variants.size(), names.size()) << op;
    for (std::size_t i = 0; i < names.size(); ++i) {
      EXPECT_EQ(variants[i]->id, int(i) + 1) << op;
      EXPECT_EQ(variants[i]->name, names[i]) << op;
      EXPECT_EQ(variants[i]->numeric, NumericClass::fp32) << variants[i]->key();
      for (const Requirement& r : variants[i]->requirements)  // a CPU's capability, never a shape's
        EXPECT_TRUE(cpu::capability_of(r)) << variants[i]->key() << " runs every shape, not only " << r.text;
    }
  }
}

// The thread count is each rung's one launch parameter: 1, 2, 4, ... below OpenMP's
// maximum, then the maximum, which is the default.
TEST(CpuLadders, EveryRungTakesTheThreadCount) {
  const int most = omp_get_max_threads();
  for (const Variant* v : rungs()) {
    ASSERT_EQ(v->params.size(), 1u) << v->key();
    const TuningParam& p = v->params[0];
    EXPECT_EQ(p.name, "threads") << v->key();
    EXPECT_EQ(p.default_value, most) << v->key();
    ASSERT_FALSE(p.values.empty()) << v->key();
    EXPECT_EQ(p.values.front(), 1) << v->key();
    EXPECT_EQ(p.values.back(), most) << v->key();
    for (std::size_t i = 1; i + 1 < p.values.size(); ++i) EXPECT_EQ(p.values[i], 2 * p.values[i - 1]) << v->key();
    EXPECT_EQ(v->default_params(), threads(most)) << v->key();
    EXPECT_TRUE(v->claims_deterministic(threads(most))) << v->key();
  }
}

// The rungs compiled for x86-64-v3 run exactly where the CPU has AVX2 and FMA, and
// say so otherwise; every other rung runs every shape.
TEST(CpuLadders, OnlyTheAvx2RungsDependOnTheCpu) {
  const Shape s = parse_shape("B=4,T=64,C=768");
  int avx2 = 0;
  for (const Variant* v : rungs()) {
    if (v->name == "avx2_fma") {
      ++avx2;
      EXPECT_EQ(v->skip_reason(s, v->default_params()), cpu::x86_64_v3_missing()) << v->key();
    } else {
      EXPECT_EQ(v->skip_reason(s, v->default_params()), std::nullopt) << v->key();
    }
  }
  EXPECT_EQ(avx2, 4);
}

TEST(CpuLadders, OnlyThePartialSumsNeedAWorkspace) {
  const Shape s = parse_shape("B=4,T=64,C=768,N=100000");
  for (const Variant* v : rungs()) {
    const std::size_t bytes = v->workspace_bytes(s, v->default_params());
    if (v->op == "layernorm_backward" || v->op == "layernorm_backward_bf16") {
      EXPECT_EQ(bytes, 16u * 2 * 768 * sizeof(float)) << v->key();  // 16 blocks of 16 rows
    } else if (v->op == "global_norm" || v->op == "global_norm_bf16") {
      EXPECT_EQ(bytes, 49u * sizeof(double)) << v->key();  // ceil(100000 / 2048) chunks
    } else {
      EXPECT_EQ(bytes, 0u) << v->key();
    }
  }
}

// Runs v on a copy of the problem's initial tensors (its optional ones left out where
// the problem omits them); returns every tensor afterwards.
HostTensors run_on(const Problem& problem, const Variant& v, const ParamValues& p) {
  HostTensors t(*problem.op, problem.shape);
  for (std::size_t i = 0; i < t.buffers.size(); ++i)
    std::memcpy(t.buffers[i].data(), problem.initial.buffers[i].data(), t.buffers[i].bytes());
  HostBuffer workspace(std::max<std::size_t>(v.workspace_bytes(problem.shape, p), 64));
  problem.op->invoke(v, t.table(problem.omit_optional), Launch{p, workspace.data(), workspace.bytes(), nullptr});
  return t;
}

// Every rung splits its work into pieces fixed by the shape (rows, chunks, strips,
// blocks of rows) and combines partial sums in an order fixed by the shape, so any
// thread count, 3 and 5 included where the machine has fewer, gives the same bits.
TEST(CpuLadders, EveryThreadCountGivesTheSameBits) {
  for (const char* shape : {"B=3,T=37,C=75,NH=3,V=101,Vp=128,OC=221,L=1", "B=2,T=40,C=96,V=300,OC=200,L=1,N=70001"}) {
    for (const Variant* v : rungs(true)) {
      const OpSpec& op = Registry::global().op(v->op);
      const Problem problem(Registry::global(), op, parse_shape(shape), 7);
      const HostTensors one = run_on(problem, *v, threads(1));
      for (int n : {2, 3, 5}) {
        const HostTensors more = run_on(problem, *v, threads(n));
        for (std::size_t i = 0; i < op.tensors.size(); ++i)
          EXPECT_EQ(std::memcmp(one.buffers[i].data(), more.buffers[i].data(), one.buffers[i].bytes()), 0)
              << v->key() << " " << op.tensors[i].name << ": threads=1 and threads=" << n << " differ at " << shape;
      }
    }
  }
}

// Far from the check inputs' [-4, 4]: where tanh saturates, where x^3 overflows, and
// NaN; every rung agrees with the reference to the op's tolerance, 1e-5 + 1e-5 |ref|.
const std::vector<float>& extreme_inputs() {
  static const std::vector<float> x{-1e30f, -1e4f, -60.0f, -12.0f, -7.5f, -5.0f, -1e-3f, -1e-30f, 0.0f,
                                    1e-30f, 1e-3f, 5.0f,   7.5f,   12.0f, 60.0f, 1e4f,   1e30f};
  return x;
}

TEST(CpuLadders, GeluForwardHoldsFarFromTheOrigin) {
  const std::vector<float>& x = extreme_inputs();
  const int64_t n = int64_t(x.size());
  std::vector<float> ref(n);
  reference::gelu_forward({ref.data(), x.data(), n});
  for (const Variant* v : testing::wb_rungs(Registry::global(), "gelu_forward", Backend::cpu)) {
    if (v->skip_reason(Shape{}, v->default_params())) continue;
    std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
    const GeluForwardArgs args{out.data(), x.data(), n};
    v->run(&args, Launch{v->default_params()});
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(out[i], ref[i], 1e-5 + 1e-5 * std::fabs(ref[i])) << v->key() << " at x = " << x[i];
  }
  std::vector<float> nan{std::numeric_limits<float>::quiet_NaN()}, out(1);
  const GeluForwardArgs args{out.data(), nan.data(), 1};
  for (const Variant* v : rungs(true))
    if (v->op == "gelu_forward") {
      v->run(&args, Launch{v->default_params()});
      EXPECT_TRUE(std::isnan(out[0])) << v->key();
    }
}

TEST(CpuLadders, GeluBackwardHoldsFarFromTheOrigin) {
  std::vector<float> x = extreme_inputs();
  // 1e30 and 1e4 make the reference's own x^3 or x * (1 - tanh^2) meaningless in
  // float; the derivative is 0 or 1 there and the rungs say so, but the reference is
  // held to its formula: compare where x^3 stays finite.
  x.erase(std::remove_if(x.begin(), x.end(), [](float v) { return std::fabs(v) > 1e3f; }), x.end());
  const int64_t n = int64_t(x.size());
  const std::vector<float> dout(n, 0.75f);
  std::vector<float> ref(n);
  reference::gelu_backward({ref.data(), x.data(), dout.data(), n});
  for (const Variant* v : testing::wb_rungs(Registry::global(), "gelu_backward", Backend::cpu)) {
    if (v->skip_reason(Shape{}, v->default_params())) continue;
    std::vector<float> dinp(n, std::numeric_limits<float>::quiet_NaN());
    const GeluBackwardArgs args{dinp.data(), x.data(), dout.data(), n};
    v->run(&args, Launch{v->default_params()});
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(dinp[i], ref[i], 1e-5 + 1e-5 * std::fabs(ref[i])) << v->key() << " at x = " << x[i];
  }
}

// Every CPU rung of a residual op (Args: its argument struct), at every launch, run in
// place as the trainer accumulates (out is inp1, then inp2), stores sum(a[i], b[i]).
template <class Args, class T, class Sum>
void expect_correct_in_place(const char* op, const std::vector<T>& a, const std::vector<T>& b, const Sum& sum) {
  const int64_t n = int64_t(a.size());
  for (const Variant* v : testing::wb_rungs(Registry::global(), op, Backend::cpu)) {
    for (const ParamValues& p : v->all_params()) {
      for (int aliased = 1; aliased <= 2; ++aliased) {
        std::vector<T> x1 = a, x2 = b;
        const Args args{aliased == 1 ? x1.data() : x2.data(), x1.data(), x2.data(), n};
        v->run(&args, Launch{p});
        const std::vector<T>& out = aliased == 1 ? x1 : x2;
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(out[i], sum(a[i], b[i]))
              << v->key() << " " << p.describe() << " out == inp" << aliased << " at " << i;
      }
    }
  }
}

// The trainer accumulates gradients with residual_forward(out = inp1 or inp2). N
// leaves a tail for the SIMD loop and chunks of unequal length for the threads.
TEST(CpuLadders, ResidualForwardIsCorrectInPlace) {
  const int64_t n = 4099;
  std::vector<float> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.25f * float(i % 17) - 1.0f;
    b[i] = 0.125f * float(i % 13) + 0.5f;
  }
  expect_correct_in_place<ResidualForwardArgs>("residual_forward", a, b, [](float x, float y) { return x + y; });
}

// The bf16 rungs convert with device/cpu/bf16_lanes.h: the bits of to_bf16 (ties to
// even, the carry up to infinity, canonical NaN) over a sweep of float bit patterns
// that hits every exponent and both signs, plus the edges. (All 2^32 patterns agree
// too, checked once by hand; too slow for every test run.)
TEST(CpuLadders, Bf16LanesRoundAsToBf16) {
  std::vector<uint32_t> patterns{0x00000000u, 0x80000000u, 0x00008000u, 0x00018000u, 0x7F7F8000u, 0x7F7FFFFFu,
                                 0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC00000u, 0x3F808000u, 0x3F818000u};
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4093) patterns.push_back(uint32_t(u));
  for (const uint32_t u : patterns) {
    const float f = float_from_bits(u);
    ASSERT_EQ(cpu::round_bits(f), to_bf16(f).bits) << std::hex << "float bits 0x" << u;
    ASSERT_EQ(float_bits(cpu::widen(uint16_t(u >> 16))), u & 0xFFFF0000u) << std::hex << "bf16 bits 0x" << (u >> 16);
  }
}

// residual_forward_bf16 in place, as the trainer accumulates: out == inp1 or inp2.
TEST(CpuLadders, ResidualForwardBf16IsCorrectInPlace) {
  const int64_t n = 4099;
  std::vector<bf16> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = to_bf16(0.3f * float(i % 17) - 1.0f);
    b[i] = to_bf16(0.07f * float(i % 13) + 0.5f);
  }
  expect_correct_in_place<ResidualForwardBf16Args>("residual_forward_bf16", a, b,
                                                   [](bf16 x, bf16 y) { return to_bf16(to_float(x) + to_float(y)); });
}

// matmul_forward_bf16 cpu/3 (vdpbf16ps) runs exactly where the CPU has AVX512-BF16 and
// says why not elsewhere; where it runs, its row and column tails and an odd C give
// the same bits at every thread count, with and without the bias.
TEST(CpuLadders, MatmulBf16OnAvx512Bf16DependsOnlyOnTheCpu) {
  const Variant* v = nullptr;
  for (const Variant* c : testing::wb_rungs(Registry::global(), "matmul_forward_bf16", Backend::cpu))
    if (c->id == 3) v = c;
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->name, "avx512bf16");
  EXPECT_EQ(v->skip_reason(parse_shape("B=4,T=64,C=768"), v->default_params()), cpu::avx512bf16_missing());
  if (cpu::avx512bf16_missing()) GTEST_SKIP() << *cpu::avx512bf16_missing();
  const OpSpec& op = Registry::global().op(v->op);
  for (const bool no_bias : {false, true}) {
    const Problem problem(Registry::global(), op, parse_shape("B=3,T=37,C=75,OC=221"), 7, no_bias);
    const HostTensors one = run_on(problem, *v, threads(1));
    for (int n : {2, 3, 5}) {
      const HostTensors more = run_on(problem, *v, threads(n));
      EXPECT_EQ(std::memcmp(one.buffers[0].data(), more.buffers[0].data(), one.buffers[0].bytes()), 0)
          << "threads=1 and threads=" << n << " differ, no_bias=" << no_bias;
    }
  }
}

// encoder_backward_bf16 with one token at most positions (the check inputs' tokens
// rarely repeat more than a few times): each element of dwte is its old value plus the
// fp32 sum of all its positions in position order, rounded once (one rounding per
// position would drop the contributions below half an ulp of the old value).
TEST(CpuLadders, EncoderBackwardBf16RoundsEachTokenOnce) {
  const int B = 3, T = 29, C = 70, V = 5;
  std::vector<int32_t> inp(B * T);
  for (int i = 0; i < B * T; ++i) inp[i] = i % 7 == 3 ? 4 : 1;  // token 1 at 75 positions, 4 at 12
  std::vector<bf16> dout(int64_t(B) * T * C), wte(int64_t(V) * C), wpe(int64_t(T) * C);
  for (std::size_t i = 0; i < dout.size(); ++i) dout[i] = to_bf16(0.0037f * float(int(i % 23) - 9));
  for (std::size_t i = 0; i < wte.size(); ++i) wte[i] = to_bf16(1.0f + 0.125f * float(i % 5));
  for (std::size_t i = 0; i < wpe.size(); ++i) wpe[i] = to_bf16(-0.5f + 0.0625f * float(i % 9));
  std::vector<bf16> want_wte = wte, want_wpe = wpe;
  for (int v = 0; v < V; ++v)
    for (int c = 0; c < C; ++c) {
      float sum = 0.0f;
      bool seen = false;  // a token at no position keeps its row untouched
      for (int i = 0; i < B * T; ++i)
        if (inp[i] == v) {
          sum += to_float(dout[int64_t(i) * C + c]);
          seen = true;
        }
      bf16& w = want_wte[int64_t(v) * C + c];
      if (seen) w = to_bf16(to_float(w) + sum);
    }
  for (int t = 0; t < T; ++t)
    for (int c = 0; c < C; ++c) {
      float sum = 0.0f;
      for (int b = 0; b < B; ++b) sum += to_float(dout[(int64_t(b) * T + t) * C + c]);
      bf16& p = want_wpe[int64_t(t) * C + c];
      p = to_bf16(to_float(p) + sum);
    }
  for (const Variant* v : rungs(true)) {
    if (v->op != "encoder_backward_bf16") continue;
    for (const ParamValues& p : v->all_params()) {
      std::vector<bf16> got_wte = wte, got_wpe = wpe;
      const EncoderBackwardBf16Args args{got_wte.data(), got_wpe.data(), dout.data(), inp.data(), B, T, C};
      v->run(&args, Launch{p});
      for (std::size_t i = 0; i < wte.size(); ++i)
        ASSERT_EQ(got_wte[i], want_wte[i]) << v->key() << " " << p.describe() << " dwte at " << i;
      for (std::size_t i = 0; i < wpe.size(); ++i)
        ASSERT_EQ(got_wpe[i], want_wpe[i]) << v->key() << " " << p.describe() << " dwpe at " << i;
    }
  }
}

}  // namespace
}  // namespace wb
