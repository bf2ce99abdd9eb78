// Launch limits known at build time (contract/launch_resources.h, workbench/runtime/
// launch_check.h): every kernel a CUDA variant launches is found in the table ptxas
// gave, and what the registry accepts -- legal launch parameters, the variant's own
// limits, then the table against the device -- fits sm_80, sm_86, sm_89 and sm_90.
// A build without nvcc has no table: these tests then skip.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "contract/launch_resources.h"
#include "contract/registry.h"
#include "workbench/runtime/launch_check.h"

namespace wb {
namespace {

constexpr int kComputeCapabilities[] = {80, 86, 89, 90};

std::vector<Shape> all_check_shapes() {
  std::vector<Shape> shapes;
  for (bool emulated : {false, true})
    for (const CheckShape& c : named_check_shapes(emulated)) shapes.push_back(c.shape);
  return shapes;
}

// The limits recomputed here from the table's raw figures, as a GPU applies them:
// registers are allocated per warp in units of 256.
bool fits(const CompiledKernel& c, const PlannedKernel& k, const LaunchLimits& l) {
  const int64_t per_warp = (int64_t(c.registers) * 32 + 255) / 256 * 256;
  const int64_t warps = (k.threads + 31) / 32;
  return k.threads <= l.max_threads_per_block && per_warp * warps <= l.registers_per_block &&
         c.static_shared <= l.max_static_shared &&
         int64_t(c.static_shared) + int64_t(k.dynamic_shared) <= l.max_shared_per_block;
}

// The plan needs no nvcc: the emulated build of a variant lists its launches, named
// from the program's symbol table, with block size and dynamic shared memory.
TEST(LaunchLimits, TheEmulatorPlansAConfigurationsLaunchesWithoutRunningThem) {
  const Registry& reg = Registry::global();
  const Variant& v = reg.variant("layernorm_forward", Backend::emu, 6);
  ParamValues p = v.default_params();
  p.set("block_size", 256);
  std::string why;
  const auto kernels = plan_launches(reg, v, parse_shape("B=4,T=64,C=768"), p, &why);
  ASSERT_TRUE(kernels) << why;
  ASSERT_EQ(kernels->size(), 1u);
  const PlannedKernel& k = kernels->front();
  EXPECT_EQ(k.unit, "06_vec4_registers");
  EXPECT_EQ(k.folder, "variants/layernorm_forward");
  EXPECT_EQ(k.name.rfind("variants::", 0), 0u) << k.name;
  EXPECT_NE(k.name.find('<'), std::string::npos) << k.name << ": the instantiation the shape selects";
  EXPECT_EQ(k.threads, 256);
  // The same variant at a wider row selects another instantiation.
  const auto wide = plan_launches(reg, v, parse_shape("B=4,T=64,C=2048"), p, &why);
  ASSERT_TRUE(wide) << why;
  EXPECT_NE(wide->front().name, k.name);
}

TEST(LaunchLimits, EveryKernelOfEveryCudaVariantIsInTheTable) {
  if (!compiled_kernels_known()) GTEST_SKIP() << "a build without nvcc has no table of compiled kernels";
  const Registry& reg = Registry::global();
  const std::vector<int> archs = compiled_archs();
  ASSERT_FALSE(archs.empty());
  int planned = 0;
  for (const OpSpec* op : reg.ops()) {
    for (const Variant* v : reg.variants(op->name, Backend::cuda)) {
      if (is_torch_rung(*v)) continue;  // PyTorch's kernels, not wb's (docs/torch.md)
      for (const ParamValues& p : v->all_params()) {
        for (const Shape& s : all_check_shapes()) {
          if (v->skip_reason(s, p)) continue;
          std::string why;
          const auto kernels = plan_launches(reg, *v, s, p, &why);
          if (!kernels) {
            EXPECT_NE(why.find("not emulated"), std::string::npos) << v->key() << " " << p.describe() << ": " << why;
            continue;
          }
          ++planned;
          for (const PlannedKernel& k : *kernels)
            for (int arch : archs)
              EXPECT_NE(find_compiled(k, arch), nullptr)
                  << v->key() << " launches " << k.unit << ": " << k.name << ", which sm_" << arch << " lacks";
        }
      }
    }
  }
  EXPECT_GT(planned, 500);
}

TEST(LaunchLimits, WhatTheRegistryAcceptsFitsSm80ToSm90) {
  if (!compiled_kernels_known()) GTEST_SKIP() << "a build without nvcc has no table of compiled kernels";
  const Registry& reg = Registry::global();
  std::map<int, int> accepted, refused;
  std::map<int, std::set<std::string>> refusals;  // one line per variant and reason kind
  for (const OpSpec* op : reg.ops()) {
    for (const Variant* v : reg.variants(op->name, Backend::cuda)) {
      for (const ParamValues& p : v->all_params()) {
        for (const Shape& s : all_check_shapes()) {
          if (v->skip_reason(s, p)) continue;
          const auto kernels = plan_launches(reg, *v, s, p);
          if (!kernels) continue;
          for (int cc : kComputeCapabilities) {
            const LaunchLimits limits = *launch_limits(cc);
            const int arch = loaded_arch(cc, compiled_archs());
            if (arch == 0) continue;  // this build has no code for it
            const std::optional<std::string> refusal = cannot_launch(reg, *v, s, p, cc);
            if (refusal) {
              ++refused[cc];
              refusals[cc].insert(v->key() + " " + p.describe() + ": " + *refusal);
              continue;
            }
            ++accepted[cc];
            for (const PlannedKernel& k : *kernels) {
              const CompiledKernel* c = find_compiled(k, arch);
              ASSERT_NE(c, nullptr) << k.name;
              EXPECT_TRUE(fits(*c, k, limits))
                  << v->key() << " " << p.describe() << " at " << describe(s, op->dims) << ": " << k.name << " with "
                  << k.threads << " threads, " << c->registers << " registers, " << c->static_shared << " + "
                  << k.dynamic_shared << " bytes of shared memory, accepted on sm_" << cc;
            }
          }
        }
      }
    }
  }
  for (int cc : kComputeCapabilities) {
    std::cout << "sm_" << cc << ": " << accepted[cc] << " configurations accepted, " << refused[cc]
              << " refused by the launch limits\n";
    int shown = 0;
    for (const std::string& line : refusals[cc])
      if (shown++ < 8) std::cout << "  " << line << "\n";
  }
  for (int cc : kComputeCapabilities) {
    if (loaded_arch(cc, compiled_archs())) {
      EXPECT_GT(accepted[cc], 500) << "sm_" << cc;
    }
  }
}

// attention_backward cuda/3 at a head size of 65..128 and tile 64 asks for about 150
// KiB of dynamic shared memory: sm_80 (163 KiB) and sm_90 (227 KiB) can launch it,
// sm_86 and sm_89 (99 KiB) cannot. Dynamic shared memory is the variant's own choice,
// so this holds whatever registers ptxas gives.
TEST(LaunchLimits, SharedMemoryDecidesPerArchitecture) {
  if (!compiled_kernels_known()) GTEST_SKIP() << "a build without nvcc has no table of compiled kernels";
  const Registry& reg = Registry::global();
  const Variant& v = reg.variant("attention_backward", Backend::cuda, 3);
  ParamValues p = v.default_params();
  p.set("tile", 64);
  const Shape s = parse_shape("B=1,T=64,C=256,NH=2");
  ASSERT_FALSE(v.skip_reason(s, p));
  for (int cc : {86, 89}) {
    if (!loaded_arch(cc, compiled_archs())) continue;
    const auto why = cannot_launch(reg, v, s, p, cc);
    ASSERT_TRUE(why) << "sm_" << cc;
    EXPECT_NE(why->find("KiB of shared memory"), std::string::npos) << *why;
  }
  for (int cc : {80, 90}) {
    if (!loaded_arch(cc, compiled_archs())) continue;
    const auto why = cannot_launch(reg, v, s, p, cc);
    if (why) {
      EXPECT_EQ(why->find("shared memory"), std::string::npos) << "sm_" << cc << ": " << *why;
    }
  }
}

// Past the check shapes: fused_residual_layernorm_forward cuda/3 holds a row of up to
// 2048 floats in registers (16 float4 per lane at C = 2048, above 64 registers per
// thread whatever ptxas does): 1024 threads cannot launch, 256 can.
TEST(LaunchLimits, ARowInRegistersCannotLaunchAThousandThreads) {
  if (!compiled_kernels_known()) GTEST_SKIP() << "a build without nvcc has no table of compiled kernels";
  const Registry& reg = Registry::global();
  const Variant& v = reg.variant("fused_residual_layernorm_forward", Backend::cuda, 3);
  const Shape s = parse_shape("B=1,T=2,C=2048");
  ParamValues p = v.default_params();
  for (int cc : kComputeCapabilities) {
    if (!loaded_arch(cc, compiled_archs())) continue;
    p.set("block_size", 1024);
    ASSERT_FALSE(v.skip_reason(s, p));
    const auto why = cannot_launch(reg, v, s, p, cc);
    ASSERT_TRUE(why) << "sm_" << cc;
    EXPECT_NE(why->find("registers per thread: a block of 1024 threads"), std::string::npos) << *why;
    p.set("block_size", 256);
    EXPECT_FALSE(cannot_launch(reg, v, s, p, cc)) << "sm_" << cc;
  }
}

// The register rule on a real table entry: the largest block that fits is accepted,
// one more warp is refused with the figures named.
TEST(LaunchLimits, RegistersPerBlockAreCountedPerWarp) {
  if (!compiled_kernels_known()) GTEST_SKIP() << "a build without nvcc has no table of compiled kernels";
  int checked = 0;
  for (const CompiledKernel& c : compiled_kernels()) {
    if (c.arch != 90 || c.registers <= 64 || c.static_shared > 0) continue;
    const int per_warp = (c.registers * 32 + 255) / 256 * 256;
    const int max_threads = 65536 / per_warp * 32;
    if (max_threads + 32 > 1024) continue;
    const std::filesystem::path source(c.source);
    PlannedKernel k{c.name, source.stem().string(), source.parent_path().string(), max_threads, 0};
    EXPECT_FALSE(launch_refusal({k}, 90)) << c.name;
    k.threads = max_threads + 32;
    const auto why = launch_refusal({k}, 90);
    ASSERT_TRUE(why) << c.name;
    EXPECT_NE(why->find(std::to_string(c.registers) + " registers per thread"), std::string::npos) << *why;
    ++checked;
  }
  if (checked == 0) {
    GTEST_SKIP() << "no kernel of this build uses more than 64 registers";
  }
}

TEST(LaunchLimits, CubinChoiceFollowsBinaryCompatibility) {
  EXPECT_EQ(loaded_arch(86, {80, 90}), 80);
  EXPECT_EQ(loaded_arch(89, {80, 90}), 80);
  EXPECT_EQ(loaded_arch(90, {80, 90}), 90);
  EXPECT_EQ(loaded_arch(80, {90}), 0);
  EXPECT_EQ(loaded_arch(86, {80, 86, 90}), 86);
  EXPECT_FALSE(launch_limits(75));
  EXPECT_EQ(launch_limits(86)->max_shared_per_block, 99 * 1024);
}

}  // namespace
}  // namespace wb

namespace wb {
namespace {

// Theoretical occupancy (contract/launch_resources.h) at figures worked out by hand from
// the CUDA occupancy calculator's rules; a made-up kernel, so that no table is needed.
CompiledKernel kernel_with(int registers, int static_shared) {
  return CompiledKernel{"variants/x/01_x.cu", "variants::x", 90, registers, static_shared, 0, 0};
}

// Every figure of an occupancy in one line, "blocks 2, warps 64 of 64, limit warps", for
// a test to state at once; "unknown" where the architecture has none.
std::string figures(const std::optional<Occupancy>& o) {
  if (!o) return "unknown";
  return "blocks " + std::to_string(o->blocks_per_sm) + ", warps " + std::to_string(o->warps_per_sm) + " of " +
         std::to_string(o->max_warps_per_sm) + ", limit " + o->limit;
}

TEST(Occupancy, WarpsLimitAFullBlockOf1024Threads) {
  const auto o = theoretical_occupancy(kernel_with(32, 0), 1024, 0, 90);
  ASSERT_EQ(figures(o), "blocks 2, warps 64 of 64, limit warps");
  EXPECT_DOUBLE_EQ(o->fraction(), 1.0);
}

TEST(Occupancy, RegistersLimitWhenEachThreadHoldsMany) {
  // 128 registers: 4096 a warp, 16 warps of the 64 Ki file; blocks of 8 warps: 2.
  const auto o = theoretical_occupancy(kernel_with(128, 0), 256, 0, 80);
  ASSERT_EQ(figures(o), "blocks 2, warps 16 of 64, limit registers");
  EXPECT_DOUBLE_EQ(o->fraction(), 0.25);
  // 72 registers round up to 2304 a warp (units of 256): 28 warps, 3 blocks of 8.
  EXPECT_EQ(figures(theoretical_occupancy(kernel_with(72, 0), 256, 0, 80)),
            "blocks 3, warps 24 of 64, limit registers");
}

TEST(Occupancy, SharedMemoryLimitsWithItsReservedKibibytePerBlock) {
  // 48 KiB static + 1 KiB reserved: 4 blocks in sm_90's 228 KiB, 3 in sm_80's 164 KiB.
  EXPECT_EQ(figures(theoretical_occupancy(kernel_with(32, 48 * 1024), 128, 0, 90)),
            "blocks 4, warps 16 of 64, limit shared memory");
  EXPECT_EQ(figures(theoretical_occupancy(kernel_with(32, 16 * 1024), 128, 32 * 1024, 80)),
            "blocks 3, warps 12 of 64, limit shared memory");
}

TEST(Occupancy, BlockSlotsLimitSmallBlocksAndSm86HasFewerWarps) {
  const auto o = theoretical_occupancy(kernel_with(16, 0), 32, 0, 90);
  ASSERT_EQ(figures(o), "blocks 32, warps 32 of 64, limit blocks");
  EXPECT_DOUBLE_EQ(o->fraction(), 0.5);
  EXPECT_EQ(figures(theoretical_occupancy(kernel_with(16, 0), 1024, 0, 86)), "blocks 1, warps 32 of 48, limit warps");
  EXPECT_EQ(figures(theoretical_occupancy(kernel_with(16, 0), 32, 0, 75)), "unknown") << "sm_75 is not known";
}

}  // namespace
}  // namespace wb
