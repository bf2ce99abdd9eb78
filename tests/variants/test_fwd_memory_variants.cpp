// The CUDA ladders of the memory-bound forward ops (encoder, gelu, residual, fused
// residual+layernorm, softmax, cross-entropy, fused classifier): what each variant
// declares -- ids, names, numeric class, launch parameters, requirements and skip
// reasons, workspace -- checked on the host; the in-place use of residual_forward
// checked on a device when one is usable.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/errors.h"
#include "contract/ops/encoder_forward.h"
#include "contract/ops/fused_classifier.h"
#include "contract/ops/fused_residual_layernorm_forward.h"
#include "contract/ops/gelu_forward.h"
#include "contract/ops/residual_forward.h"
#include "contract/ops/softmax_forward.h"
#include "contract/registry.h"
#include "workbench/runtime/executor.h"
#include "tests/support/ladder.h"

namespace wb {
namespace {

// The ladders: op -> the names of CUDA variants 1, 2, ... in order.
const std::map<std::string, std::vector<std::string>>& ladders() {
  static const std::map<std::string, std::vector<std::string>> table {
    {"encoder_forward", {"thread_per_token", "thread_per_element", "vec4"}}, {"gelu_forward", {"naive", "vec4"}},
        {"residual_forward", {"naive", "vec4"}},
        {"fused_residual_layernorm_forward", {"two_kernels", "warp_per_row", "vec4_registers"}},
#if WB_HAVE_CUDNN
        {"softmax_forward", {"thread_per_row", "block_per_row", "online_warp_per_row", "online_vec4", "cudnn_softmax"}},
#else
        {"softmax_forward", {"thread_per_row", "block_per_row", "online_warp_per_row", "online_vec4"}},
#endif
        {"crossentropy_forward", {"thread_per_row"}},
        {"fused_classifier", {"separate_kernels", "online_block_per_row", "online_vec4"}},
  };
  return table;
}

const Variant& cuda_variant(const std::string& op, int id) { return Registry::global().variant(op, Backend::cuda, id); }

std::string skip(const std::string& op, int id, const Shape& s) {
  const Variant& v = cuda_variant(op, id);
  return v.skip_reason(s, v.default_params()).value_or("runs");
}

#if WB_HAVE_CUDA

TEST(FwdMemoryVariants, EveryLadderHasItsIdsAndNames) {
  for (const auto& [op, names] : ladders()) {
    const auto variants = testing::wb_rungs(Registry::global(), op, Backend::cuda);
    ASSERT_GE(variants.size(), names.size()) << op;
    for (size_t i = 0; i < names.size(); ++i) {
      EXPECT_EQ(variants[i]->id, int(i) + 1) << op;
      EXPECT_EQ(variants[i]->name, names[i]) << op;
      EXPECT_EQ(variants[i]->numeric, NumericClass::fp32) << op << " cuda/" << i + 1;
      EXPECT_FALSE(variants[i]->summary.empty()) << op << " cuda/" << i + 1;
      EXPECT_EQ(variants[i]->source_hash.size(), 64u) << op << " cuda/" << i + 1;
    }
  }
}

TEST(FwdMemoryVariants, HandWrittenKernelsSweepTheBlockSizeOnly) {
  for (const auto& [op, names] : ladders()) {
    for (const Variant* v : testing::wb_rungs(Registry::global(), op, Backend::cuda)) {
      if (is_triton_rung(*v)) continue;  // its parameters are Triton's (docs/triton.md)
      if (v->name == "cudnn_softmax") {
        EXPECT_TRUE(v->params.empty()) << "cuDNN picks its own launch configuration";
        continue;
      }
      ASSERT_EQ(v->params.size(), 1u) << v->key();
      EXPECT_EQ(v->params[0].name, "block_size") << v->key();
      EXPECT_EQ(v->params[0].values, (std::vector<int>{32, 64, 128, 256, 512, 1024})) << v->key();
      EXPECT_EQ(v->params[0].default_value, 256) << v->key();
      EXPECT_EQ(v->all_params().size(), 6u) << v->key();
    }
  }
}

TEST(FwdMemoryVariants, RequirementsAreDeclared) {
  EXPECT_EQ(cuda_variant("encoder_forward", 3).requirements_text(), "C % 4 == 0");
  EXPECT_EQ(cuda_variant("fused_residual_layernorm_forward", 3).requirements_text(), "C % 4 == 0, C <= 2048");
  EXPECT_EQ(cuda_variant("softmax_forward", 4).requirements_text(), "Vp % 4 == 0");
  EXPECT_EQ(cuda_variant("fused_classifier", 3).requirements_text(), "Vp % 4 == 0");
  // The vectorised elementwise variants take any N (scalar tail), so declare nothing.
  EXPECT_EQ(cuda_variant("gelu_forward", 2).requirements_text(), "-");
  EXPECT_EQ(cuda_variant("residual_forward", 2).requirements_text(), "-");
  for (const auto& [op, names] : ladders())
    for (int id : {1, 2})
      if (int(names.size()) >= id) {
        EXPECT_EQ(cuda_variant(op, id).requirements_text(), "-") << op << " cuda/" << id;
      }
}

TEST(FwdMemoryVariants, VectorisedVariantsSkipShapesTheyCannotRun) {
  const Shape odd_c = parse_shape("B=3,T=37,C=75,V=101");      // C % 4 != 0
  const Shape wide_c = parse_shape("B=2,T=4,C=2052,V=101");    // C % 4 == 0 but C > 2048
  const Shape odd_vp = parse_shape("B=2,T=3,C=8,V=11,Vp=13");  // Vp % 4 != 0
  EXPECT_EQ(skip("encoder_forward", 3, odd_c), "requires C % 4 == 0");
  EXPECT_EQ(skip("encoder_forward", 3, wide_c), "runs");
  EXPECT_EQ(skip("fused_residual_layernorm_forward", 3, odd_c), "requires C % 4 == 0");
  EXPECT_EQ(skip("fused_residual_layernorm_forward", 3, wide_c), "requires C <= 2048");
  EXPECT_EQ(skip("fused_residual_layernorm_forward", 2, wide_c), "runs");
  EXPECT_EQ(skip("softmax_forward", 4, odd_vp), "requires Vp % 4 == 0");
  EXPECT_EQ(skip("softmax_forward", 3, odd_vp), "runs");
  EXPECT_EQ(skip("fused_classifier", 3, odd_vp), "requires Vp % 4 == 0");
  EXPECT_EQ(skip("fused_classifier", 2, odd_vp), "runs");
  // V need not be a multiple of 4, only Vp.
  EXPECT_EQ(skip("softmax_forward", 4, parse_shape("B=2,T=3,C=8,V=11,Vp=16")), "runs");
  EXPECT_EQ(skip("gelu_forward", 2, odd_c), "runs");
  EXPECT_EQ(skip("residual_forward", 2, odd_c), "runs");
#if WB_HAVE_CUDNN
  EXPECT_EQ(skip("softmax_forward", 5, parse_shape("B=8,T=1024,V=50257")), "runs");
  EXPECT_EQ(skip("softmax_forward", 5, parse_shape("B=64,T=1024,V=50257")), "requires B*T*Vp < 2^31");
#endif
}

TEST(FwdMemoryVariants, EveryVariantRunsTheSweepShapeAndTheCheckShapesItCan) {
  const Shape sweep = preset_shape("llmc-dev");
  for (const auto& [op, names] : ladders())
    for (const Variant* v : testing::wb_rungs(Registry::global(), op, Backend::cuda))
      for (const ParamValues& p : v->all_params()) EXPECT_FALSE(v->skip_reason(sweep, p)) << v->key();
  // On the check shapes, only C % 4 != 0 (C = 75) skips anything.
  for (const Shape& s : check_shapes())
    for (const auto& [op, names] : ladders())
      for (const Variant* v : testing::wb_rungs(Registry::global(), op, Backend::cuda)) {
        const bool expect_skip = s.C % 4 != 0 && v->requirements_text().find("C % 4") != std::string::npos;
        EXPECT_EQ(v->skip_reason(s, v->default_params()).has_value(), expect_skip)
            << v->key() << " at " << describe(s, {"B", "T", "C", "V", "Vp"});
      }
}

TEST(FwdMemoryVariants, OnlyTheUnfusedClassifierNeedsAWorkspace) {
  const Shape s = parse_shape("B=3,T=37,C=75,V=101");
  const Variant& unfused = cuda_variant("fused_classifier", 1);
  EXPECT_EQ(unfused.workspace_bytes(s, unfused.default_params()), 2u * 3 * 37 * sizeof(float));
  EXPECT_EQ(unfused.workspace_bytes(preset_shape("llmc-dev"), unfused.default_params()), 2u * 8 * 1024 * 4);
  for (const auto& [op, names] : ladders())
    for (const Variant* v : testing::wb_rungs(Registry::global(), op, Backend::cuda)) {
      if (v == &unfused) continue;
      EXPECT_EQ(v->workspace_bytes(s, v->default_params()), 0u) << v->key();
    }
}

// A 128-bit variant given a pointer that is not 16-byte aligned says so before it
// touches the device (so this runs without one).
// Misaligned pointers are a configuration the variant cannot run: wb::Unsupported, which
// the harness reports as skipped with the reason (base/errors.h).
TEST(FwdMemoryVariants, VectorisedVariantsRejectMisalignedPointers) {
  alignas(16) static float host[64] = {};
  float* odd = host + 1;
  const Launch launch{cuda_variant("gelu_forward", 2).default_params(), nullptr, 0, nullptr};
  const auto run = [&](const std::string& op, int id, const void* args) { cuda_variant(op, id).run(args, launch); };

  const GeluForwardArgs gelu{odd, host, 8};
  EXPECT_THROW(run("gelu_forward", 2, &gelu), Unsupported);
  const ResidualForwardArgs residual{host, host, odd, 8};
  EXPECT_THROW(run("residual_forward", 2, &residual), Unsupported);
  const EncoderForwardArgs encoder{odd, nullptr, host, host, 1, 1, 4};
  EXPECT_THROW(run("encoder_forward", 3, &encoder), Unsupported);
  const FusedResidualLayernormForwardArgs fused{host, host, host, host, host, host, odd, host, 1, 1, 4};
  EXPECT_THROW(run("fused_residual_layernorm_forward", 3, &fused), Unsupported);
  const SoftmaxForwardArgs softmax{host, odd, 1, 1, 3, 4};
  EXPECT_THROW(run("softmax_forward", 4, &softmax), Unsupported);
  const FusedClassifierArgs classifier{odd, host, nullptr, 1.0f, 1, 1, 3, 4};
  EXPECT_THROW(run("fused_classifier", 3, &classifier), Unsupported);
}

// The trainer accumulates gradients with residual_forward(out = inp1 or inp2):
// elementwise variants must be right when the output aliases an input. N leaves a
// tail of 3 for the vectorised variant.
TEST(FwdMemoryVariants, ResidualForwardIsCorrectInPlace) {
  if (auto why = cuda_unavailable_reason()) GTEST_SKIP() << "no usable CUDA device: " << *why;
  auto ex = make_executor(Backend::cuda);
  const int64_t n = 4099;
  std::vector<float> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.25f * float(i % 17) - 1.0f;
    b[i] = 0.125f * float(i % 13) + 0.5f;
  }
  const size_t bytes = size_t(n) * sizeof(float);
  float* da = static_cast<float*>(ex->allocate(bytes));
  float* db = static_cast<float*>(ex->allocate(bytes));
  for (const Variant* v : testing::wb_rungs(Registry::global(), "residual_forward", Backend::cuda)) {
    for (const ParamValues& p : v->all_params()) {
      for (int aliased = 1; aliased <= 2; ++aliased) {
        ex->to_device(da, a.data(), bytes);
        ex->to_device(db, b.data(), bytes);
        const ResidualForwardArgs args{aliased == 1 ? da : db, da, db, n};
        v->run(&args, Launch{p, nullptr, 0, ex->context()});
        ex->synchronize();
        std::vector<float> out(n);
        ex->to_host(out.data(), aliased == 1 ? da : db, bytes);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(out[i], a[i] + b[i]) << v->key() << " " << p.describe() << " out == inp" << aliased << " at " << i;
      }
    }
  }
  ex->release(da);
  ex->release(db);
}

#else

TEST(FwdMemoryVariants, BuiltWithoutCuda) {
  for (const auto& [op, names] : ladders()) EXPECT_TRUE(testing::wb_rungs(Registry::global(), op, Backend::cuda).empty()) << op;
  (void)&skip;
}

#endif

}  // namespace
}  // namespace wb
