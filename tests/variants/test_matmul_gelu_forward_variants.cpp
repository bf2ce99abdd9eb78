// The matmul_gelu_forward ladders: ids, names, numeric classes and launch parameters,
// and what each fused variant stores against the two ops it fuses, run on the same
// inputs: pre is the linear layer's output and out the GELU of pre, bit for bit where
// the fused variant shares its code with the unfused pair (the register-tiled kernel,
// the cuBLAS SGEMM, the GELU of the CPU rungs). The emulated variants run here without
// a GPU; on a device `wb check` covers them (tests/variants/test_cuda.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "contract/ops/gelu_forward.h"
#include "contract/ops/matmul_forward.h"
#include "contract/ops/matmul_gelu_forward.h"
#include "contract/registry.h"
#include "tests/support/ladder.h"
#include "workbench/runtime/executor.h"

namespace wb {
namespace {

constexpr const char* kOp = "matmul_gelu_forward";

TEST(MatmulGeluForwardVariants, CpuLadder) {
  ASSERT_EQ(testing::rungs(kOp, Backend::cpu), (std::vector<std::string>{"1 reference", "2 openblas_epilogue"}));
  testing::parameterless_cpu_rung(kOp, 2);  // OpenBLAS threads the product as it is built
}

// The executor's memory for n floats, filled from host (or poisoned by the executor).
struct DeviceFloats {
  DeviceFloats(Executor& executor, const std::vector<float>& values) : ex(executor), n(values.size()) {
    p = static_cast<float*>(ex.allocate(n * sizeof(float)));
    ex.to_device(p, values.data(), n * sizeof(float));
  }
  DeviceFloats(Executor& executor, std::size_t count) : ex(executor), n(count) {
    p = static_cast<float*>(ex.allocate(n * sizeof(float)));
    ex.poison(p, n * sizeof(float));
  }
  ~DeviceFloats() { ex.release(p); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  std::vector<float> host() const {
    std::vector<float> h(n);
    ex.synchronize();
    ex.to_host(h.data(), p, n * sizeof(float));
    return h;
  }
  Executor& ex;
  std::size_t n;
  float* p;
};

std::vector<float> random_floats(std::size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (float(s >> 8) / float(1u << 24) * 2.0f - 1.0f);
  }
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Runs a fused variant and the unfused pair (a matmul_forward variant, then a
// gelu_forward variant over its output) on the same inputs of one backend; expects
// the fused pre to be the matmul's out and the fused out its GELU, bit for bit.
void expect_fused_equals_unfused(Backend backend, int fused_id, int matmul_id, int gelu_id, const char* dims,
                                 bool with_bias) {
  const Registry& reg = Registry::global();
  const Variant& fused = reg.variant(kOp, backend, fused_id);
  const Variant& matmul = reg.variant("matmul_forward", backend, matmul_id);
  const Variant& gelu = reg.variant("gelu_forward", backend, gelu_id);
  const Shape s = parse_shape(dims);
  const int rows = int(s.B * s.T), C = int(s.C), OC = int(s.OC);
  auto ex = make_executor(backend);
  const DeviceFloats inp(*ex, random_floats(std::size_t(rows) * C, 1, 1.0f));
  const DeviceFloats weight(*ex, random_floats(std::size_t(OC) * C, 2, 0.2f));
  const DeviceFloats bias(*ex, random_floats(std::size_t(OC), 3, 1.0f));
  const float* b = with_bias ? bias.p : nullptr;
  const std::size_t n = std::size_t(rows) * OC;
  const DeviceFloats out(*ex, n), pre(*ex, n), mm(*ex, n), act(*ex, n);
  const auto launch = [&](const Variant& v, const void* args) {
    v.run(args, Launch{v.default_params(), nullptr, 0, ex->context()});
  };
  const MatmulGeluForwardArgs f{out.p, pre.p, inp.p, weight.p, b, int(s.B), int(s.T), C, OC};
  launch(fused, &f);
  const MatmulForwardArgs m{mm.p, inp.p, weight.p, b, int(s.B), int(s.T), C, OC};
  launch(matmul, &m);
  const GeluForwardArgs g{act.p, mm.p, int64_t(n)};
  launch(gelu, &g);
  const std::string what = fused.key() + " at " + dims + (with_bias ? "" : " without bias");
  EXPECT_TRUE(same_bits(pre.host(), mm.host())) << what << ": pre is not " << matmul.key() << "'s out";
  EXPECT_TRUE(same_bits(out.host(), act.host())) << what << ": out is not " << gelu.key() << " of " << matmul.key();
}

// The CPU rung: matmul_forward cpu/3's bias broadcast and sgemm, and the GELU of
// gelu_forward cpu/4 (variants/gelu/gelu.h, compiled for x86-64-v3).
TEST(MatmulGeluForwardVariants, CpuRungStoresWhatTheUnfusedPairStores) {
  const Variant& gelu = Registry::global().variant("gelu_forward", Backend::cpu, 4);
  if (gelu.skip_reason(Shape{}, gelu.default_params())) GTEST_SKIP() << "this CPU cannot run gelu_forward cpu/4";
  for (bool with_bias : {true, false})
    for (const char* dims : {"B=3,T=37,C=75,OC=221", "B=2,T=19,C=64,OC=256"})
      expect_fused_equals_unfused(Backend::cpu, 2, 3, 4, dims, with_bias);
}

// In emulation: the register-tiled kernel is shared with matmul_forward cuda/3 and the
// GELU with gelu_forward (variants/gelu/gelu.cuh); the cuBLAS variant's SGEMM
// and bias are matmul_forward cuda/5's (emulated cuBLAS: OpenBLAS, column-major).
TEST(MatmulGeluForwardVariants, EmulatedVariantsStoreWhatTheUnfusedPairStores) {
  for (bool with_bias : {true, false})
    for (const char* dims : {"B=3,T=37,C=75,OC=221", "B=2,T=19,C=64,OC=256"}) {
      expect_fused_equals_unfused(Backend::emu, 2, 3, 1, dims, with_bias);  // register tiles
      expect_fused_equals_unfused(Backend::emu, 3, 5, 1, dims, with_bias);  // cuBLAS, scalar and float4 epilogues
      expect_fused_equals_unfused(Backend::emu, 1, 1, 1, dims, with_bias);  // naive
    }
}

#if WB_HAVE_CUDA

TEST(MatmulGeluForwardVariants, CudaLadder) {
  ASSERT_EQ(testing::rungs(kOp, Backend::cuda),
            (std::vector<std::string>{"1 naive", "2 register_tiles", "3 cublas_epilogue"}));
  for (const Variant* v : testing::wb_rungs(Registry::global(), kOp, Backend::cuda)) {
    EXPECT_EQ(v->numeric, NumericClass::fp32) << v->label();
    EXPECT_EQ(v->source, "variants/matmul_gelu_forward/0" + std::to_string(v->id) + "_" + v->name + ".cu");
    EXPECT_TRUE(v->requirements.empty()) << v->label() << " runs every shape";
  }
  // the register tiles take matmul_forward cuda/3's parameters and limits
  const Variant& tiles = Registry::global().variant(kOp, Backend::cuda, 2);
  const Variant& mm = Registry::global().variant("matmul_forward", Backend::cuda, 3);
  EXPECT_EQ(tiles.params_text(), mm.params_text());
  EXPECT_EQ(tiles.default_params(), mm.default_params());
  const Shape huge = parse_shape("B=1024,T=65536,C=768,OC=64");
  EXPECT_EQ(tiles.skip_reason(huge, tiles.default_params()), mm.skip_reason(huge, mm.default_params()));
  EXPECT_TRUE(tiles.skip_reason(huge, tiles.default_params()).has_value());
}

#endif

}  // namespace
}  // namespace wb
