#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/errors.h"
#include "contract/catalogue.h"
#include "contract/ops/gelu_forward.h"
#include "contract/ops/layernorm_forward.h"
#include "contract/registry.h"
#include "contract/variant_errors.h"
#include "tests/support/test_helpers.h"

namespace wb {
namespace {

using testing::usage_error;

TEST(Registry, EveryOpOfTheStepIsCatalogued) {
  const std::set<std::string> expected{"encoder_forward",
                                       "encoder_backward",
                                       "layernorm_forward",
                                       "layernorm_backward",
                                       "matmul_forward",
                                       "matmul_gelu_forward",
                                       "matmul_backward",
                                       "matmul_backward_bias",
                                       "attention_forward",
                                       "attention_backward",
                                       "gelu_forward",
                                       "gelu_backward",
                                       "residual_forward",
                                       "fused_residual_layernorm_forward",
                                       "softmax_forward",
                                       "crossentropy_forward",
                                       "crossentropy_softmax_backward",
                                       "fused_classifier",
                                       "adamw",
                                       "global_norm",
                                       // on bf16 storage
                                       "encoder_forward_bf16",
                                       "matmul_forward_bf16",
                                       "matmul_gelu_forward_bf16",
                                       "attention_forward_bf16",
                                       "attention_backward_bf16",
                                       "residual_forward_bf16",
                                       "layernorm_forward_bf16",
                                       "fused_residual_layernorm_forward_bf16",
                                       "gelu_forward_bf16",
                                       "fused_classifier_bf16",
                                       "matmul_backward_bf16",
                                       "matmul_backward_bias_bf16",
                                       "gelu_backward_bf16",
                                       "layernorm_backward_bf16",
                                       "encoder_backward_bf16",
                                       "global_norm_bf16",
                                       "adamw_bf16"};
  std::set<std::string> names;
  for (const OpSpec* op : Registry::global().ops()) names.insert(op->name);
  EXPECT_EQ(names, expected);
}

TEST(Registry, EveryOpOnBf16StorageHasAnFp32TwinWithItsTensorsOrSaysWhyNot) {
  const Registry& reg = Registry::global();
  for (const OpSpec* op : reg.ops()) {
    if (op->storage() != "bf16") {
      EXPECT_TRUE(op->fp32_twin.empty()) << op->name;
      EXPECT_TRUE(op->own_truth.empty() && !reg.reference(op->name).truth) << op->name;
      continue;
    }
    EXPECT_EQ(op->own_truth.empty(), !reg.reference(op->name).truth) << op->name << ": a truth of its own, and why";
    if (!op->own_truth.empty()) {
      EXPECT_TRUE(op->fp32_twin.empty()) << op->name << " names a twin and states its own truth";
      continue;
    }
    ASSERT_FALSE(op->fp32_twin.empty()) << op->name << " stores bf16 but names no fp32 twin, nor why not";
    const OpSpec& twin = reg.op(op->fp32_twin);
    EXPECT_EQ(twin.storage(), "fp32") << op->name;
    ASSERT_EQ(twin.tensors.size(), op->tensors.size()) << op->name;
    for (std::size_t i = 0; i < op->tensors.size(); ++i) {
      EXPECT_EQ(twin.tensors[i].name, op->tensors[i].name) << op->name;
      EXPECT_EQ(twin.tensors[i].role, op->tensors[i].role) << op->name;
      // bf16 outputs are held to half an ulp beyond the twin's tolerance (one rounding).
      if (op->tensors[i].dtype == DType::bf16 && op->tensors[i].checked()) {
        EXPECT_GE(op->tensors[i].tol(NumericClass::fp32, Shape{}).ulps, 0.5) << op->name << " " << op->tensors[i].name;
      }
    }
  }
}

TEST(Registry, EveryOpHasItsReferenceAsCpuVariantOne) {
  const Registry& reg = Registry::global();
  for (const OpSpec* op : reg.ops()) {
    const Variant& v = reg.variant(op->name, Backend::cpu, 1);
    EXPECT_EQ(v.name, "reference") << op->name;
    EXPECT_EQ(v.source.rfind("reference/", 0), 0u) << op->name << ": " << v.source;
    EXPECT_EQ(v.source_hash.size(), 64u) << op->name << ": the build hashes every reference file";
    EXPECT_TRUE(op->flops) << op->name;
    // dims in the canonical order, the order reports are read back in
    std::vector<std::string> canonical;
    for (const auto& d : Shape::dim_names())
      if (std::find(op->dims.begin(), op->dims.end(), d) != op->dims.end()) canonical.push_back(d);
    EXPECT_EQ(op->dims, canonical) << op->name;
    EXPECT_GT(op->bytes(parse_shape("B=2,T=8,C=16")), 0) << op->name;
    for (const auto& t : op->tensors)
      if (t.checked()) {
        EXPECT_TRUE(t.tol) << op->name << "." << t.name << " has no tolerance";
      }
  }
}

TEST(Registry, MatmulHasBlockedAndOpenblasCpuVariants) {
  const Registry& reg = Registry::global();
  for (const char* op : {"matmul_forward", "matmul_backward"}) {
    EXPECT_EQ(reg.variant(op, Backend::cpu, 2).name, "blocked");
    EXPECT_EQ(reg.variant(op, Backend::cpu, 3).name, "openblas");
  }
}

TEST(Registry, LayernormForwardCudaVariantsSweepTheBlockSize) {
#if WB_HAVE_CUDA
  for (const Variant* v : Registry::global().variants("layernorm_forward", Backend::cuda)) {
    if (is_triton_rung(*v) || is_torch_rung(*v)) continue;  // Triton's parameters; PyTorch's (docs/torch.md)
    EXPECT_EQ(v->numeric, NumericClass::fp32);
    ASSERT_EQ(v->params.size(), v->id == 7 ? 2u : 1u);  // cuda/7 also sweeps its tile width
    EXPECT_EQ(v->params[0].name, "block_size");
    EXPECT_EQ(v->params[0].values, (std::vector<int>{32, 64, 128, 256, 512, 1024}));
    if (v->id == 7) {
      EXPECT_EQ(v->params[1].name, "tile");
      EXPECT_EQ(v->params[1].values, (std::vector<int>{8, 16, 32}));
    }
  }
#else
  GTEST_SKIP() << "built without CUDA: no CUDA variants are compiled";
#endif
}

TEST(Registry, LookupErrorsNameTheLegalChoices) {
  const Registry& reg = Registry::global();
  const std::string op = usage_error([&] { reg.op("layernorm"); });
  EXPECT_NE(op.find("unknown op 'layernorm'"), std::string::npos);
  EXPECT_NE(op.find("layernorm_forward"), std::string::npos);
  const std::string variant = usage_error([&] { reg.variant("layernorm_forward", Backend::cpu, 9); });
  EXPECT_NE(variant.find("unknown variant 9 of layernorm_forward on cpu"), std::string::npos);
  EXPECT_NE(variant.find("1 reference"), std::string::npos);
}

TEST(Registry, VariantFileNamesGiveBackendAndId) {
  EXPECT_EQ(parse_variant_file("variants/layernorm_forward/03_warp_per_row.cu").id, 3);
  EXPECT_EQ(parse_variant_file("variants/layernorm_forward/03_warp_per_row.cu").backend, Backend::cuda);
  EXPECT_EQ(parse_variant_file("variants/matmul_forward/cpu_02_blocked.cpp").backend, Backend::cpu);
  EXPECT_THROW(parse_variant_file("variants/matmul_forward/blocked.cpp"), std::logic_error);
  EXPECT_THROW(parse_variant_file("variants/matmul_forward/02_blocked.cpp"), std::logic_error);
}

void gelu_noop(const GeluForwardArgs&, const Launch&) {}
void layernorm_noop(const LayernormForwardArgs&, const Launch&) {}

Variant test_variant(int id) {
  Variant v = Variant::of(&layernorm_noop);
  v.op = "layernorm_forward";
  v.backend = Backend::cuda;
  v.id = id;
  v.name = "test";
  v.summary = "a test variant";
  return v;
}

TEST(Registry, AddRejectsMalformedVariants) {
  Registry reg(all_ops());
  reg.add(test_variant(1));
  // A variant file's mistakes are bad input (VariantFileError, exit 2), not wb's bugs.
  EXPECT_THROW(reg.add(test_variant(1)), VariantFileError);  // duplicate id

  Variant wrong_args = Variant::of(&gelu_noop);
  wrong_args.op = "layernorm_forward";
  wrong_args.id = 2;
  wrong_args.name = "wrong";
  wrong_args.summary = "takes gelu's arguments";
  EXPECT_THROW(reg.add(wrong_args), VariantFileError);

  Variant bad_default = test_variant(3);
  bad_default.params = {block_size_param({32, 64}, 128)};
  EXPECT_THROW(reg.add(bad_default), VariantFileError);

  Variant unknown_op = test_variant(4);
  unknown_op.op = "layernorm";
  EXPECT_THROW(reg.add(unknown_op), VariantFileError);
}

TEST(Variant, ParamsAreCheckedAgainstTheLegalValues) {
  Variant v = test_variant(1);
  v.params = {block_size_param(), TuningParam{"tile", {16, 32}, 16}};
  EXPECT_EQ(v.all_params().size(), 12u);
  EXPECT_EQ(v.default_params().describe(), "block_size=256,tile=16");
  const std::string illegal = usage_error([&] { v.check_params({{"block_size", 48}}); });
  EXPECT_NE(illegal.find("block_size 48 is not legal"), std::string::npos);
  EXPECT_NE(illegal.find("32, 64, 128, 256, 512, 1024"), std::string::npos);
  EXPECT_NE(usage_error([&] {
              v.check_params({{"warps", 4}});
            }).find("no launch parameter 'warps'"),
            std::string::npos);
  EXPECT_EQ(v.complete({{"tile", 32}}).describe(), "block_size=256,tile=32");
  EXPECT_EQ(v.params_text(), "block_size 32..1024; tile 16, 32");
}

TEST(Variant, RequirementsGiveSkipReasons) {
  Variant v = test_variant(1);
  v.requirements = {{"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }}};
  v.launch_limit = [](const Shape& s, const ParamValues& p) -> std::optional<std::string> {
    if (p.get("block_size") < s.C / 8) return std::string("block too small for the row");
    return std::nullopt;
  };
  v.params = {block_size_param()};
  EXPECT_EQ(v.skip_reason(parse_shape("C=75"), {{"block_size", 256}}), "requires C % 4 == 0");
  EXPECT_EQ(v.skip_reason(parse_shape("C=768"), {{"block_size", 32}}), "block too small for the row");
  EXPECT_EQ(v.skip_reason(parse_shape("C=768"), {{"block_size", 256}}), std::nullopt);
}

#if WB_HAVE_CUDA
TEST(Variant, Vec4LayernormSkipsRowsItCannotHold) {
  const Variant& v = Registry::global().variant("layernorm_forward", Backend::cuda, 6);
  const ParamValues p = v.default_params();
  EXPECT_EQ(v.skip_reason(parse_shape("C=75"), p), "requires C % 4 == 0");
  EXPECT_EQ(v.skip_reason(parse_shape("C=4096"), p), "requires C <= 2048");
  EXPECT_EQ(v.skip_reason(parse_shape("C=768"), p), std::nullopt);
  EXPECT_EQ(v.workspace_bytes(parse_shape("C=768"), p), 0u);
}
#endif

}  // namespace
}  // namespace wb
