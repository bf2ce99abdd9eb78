// What this CPU can do (base/cpu_isa.h, capabilities.h, onednn.h): the levels and
// the cap on made-up CPUs, the capability requirements of the rungs, and, through wb
// and the trainer run as a user runs them, that WB_CPU_ISA really caps what runs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/cpu_isa.h"
#include "contract/cpu_capabilities.h"
#include "contract/registry.h"
#include "device/cpu/onednn.h"
#include "tests/support/test_helpers.h"
#include "trainer/data.h"
#include "workbench/runtime/can_run.h"
#include "workbench/runtime/context.h"
#include "workbench/runtime/executor.h"

namespace wb {
namespace {

using cpu::IsaFeatures;
using cpu::IsaLevel;

IsaFeatures v3() {
  IsaFeatures f;
  f.sse42 = true;
  f.avx = f.avx2 = f.fma = f.f16c = f.bmi1 = f.bmi2 = f.lzcnt = f.movbe = true;
  return f;
}

IsaFeatures v4() {
  IsaFeatures f = v3();
  f.avx512f = f.avx512bw = f.avx512cd = f.avx512dq = f.avx512vl = true;
  return f;
}

IsaFeatures sapphire_rapids() {
  IsaFeatures f = v4();
  f.avx512vnni = f.avx512bf16 = f.amx_tile = f.amx_bf16 = true;
  return f;
}

TEST(CpuIsa, LevelsParseCaseInsensitivelyAndNothingElse) {
  EXPECT_EQ(cpu::parse_isa_level("avx2"), IsaLevel::avx2);
  EXPECT_EQ(cpu::parse_isa_level("AVX512BF16"), IsaLevel::avx512bf16);
  EXPECT_EQ(cpu::parse_isa_level("sse2"), IsaLevel::sse2);
  EXPECT_EQ(cpu::parse_isa_level("amx"), IsaLevel::amx);
  EXPECT_FALSE(cpu::parse_isa_level("avx-512"));
  EXPECT_FALSE(cpu::parse_isa_level("native"));
  EXPECT_FALSE(cpu::parse_isa_level(""));
  for (IsaLevel l : {IsaLevel::sse2, IsaLevel::avx2, IsaLevel::avx512, IsaLevel::avx512bf16, IsaLevel::amx})
    EXPECT_EQ(cpu::parse_isa_level(cpu::to_string(l)), l);
}

TEST(CpuIsa, ALevelNeedsAllOfItsExtensions) {
  EXPECT_EQ(cpu::level_of(IsaFeatures{}), IsaLevel::sse2);
  EXPECT_EQ(cpu::level_of(v3()), IsaLevel::avx2);
  IsaFeatures no_movbe = v3();
  no_movbe.movbe = false;  // x86-64-v3 is all of it: code compiled for it may use MOVBE
  EXPECT_EQ(cpu::level_of(no_movbe), IsaLevel::sse2);
  EXPECT_EQ(cpu::level_of(v4()), IsaLevel::avx512);
  IsaFeatures no_dq = v4();
  no_dq.avx512dq = false;
  EXPECT_EQ(cpu::level_of(no_dq), IsaLevel::avx2);
  IsaFeatures bf16 = v4();
  bf16.avx512bf16 = true;
  EXPECT_EQ(cpu::level_of(bf16), IsaLevel::avx512bf16);
  EXPECT_EQ(cpu::level_of(sapphire_rapids()), IsaLevel::amx);
  IsaFeatures amx_without_bf16 = sapphire_rapids();
  amx_without_bf16.avx512bf16 = false;
  EXPECT_EQ(cpu::level_of(amx_without_bf16), IsaLevel::avx512);
}

TEST(CpuIsa, ACapRemovesWhatIsAboveIt) {
  const IsaFeatures avx2 = cpu::capped(sapphire_rapids(), IsaLevel::avx2);
  EXPECT_EQ(cpu::level_of(avx2), IsaLevel::avx2);
  EXPECT_TRUE(avx2.avx2 && avx2.fma);
  EXPECT_FALSE(avx2.avx512f || avx2.avx512vnni || avx2.avx512bf16 || avx2.amx_tile || avx2.amx_bf16);
  EXPECT_EQ(cpu::describe(avx2), "AVX2, FMA");
  EXPECT_EQ(cpu::level_of(cpu::capped(sapphire_rapids(), IsaLevel::avx512)), IsaLevel::avx512);
  EXPECT_EQ(cpu::level_of(cpu::capped(sapphire_rapids(), IsaLevel::avx512bf16)), IsaLevel::avx512bf16);
  EXPECT_EQ(cpu::describe(cpu::capped(sapphire_rapids(), IsaLevel::sse2)), "SSE2, SSE4.2");
  // A cap above the CPU changes nothing.
  EXPECT_EQ(cpu::describe(cpu::capped(v3(), IsaLevel::amx)), cpu::describe(v3()));
  EXPECT_EQ(cpu::level_of(cpu::capped(v3(), IsaLevel::amx)), IsaLevel::avx2);
}

TEST(CpuIsa, DescriptionsNameWhatIsThere) {
  EXPECT_EQ(cpu::describe(IsaFeatures{}), "SSE2 only");
  EXPECT_EQ(cpu::describe(v4()), "AVX2, FMA, AVX-512 F/BW/CD/DQ/VL");
  EXPECT_EQ(cpu::describe(sapphire_rapids()),
            "AVX2, FMA, AVX-512 F/BW/CD/DQ/VL, AVX512-VNNI, AVX512-BF16, AMX-TILE, AMX-BF16");
}

TEST(CpuIsa, ThisProcessAgreesWithItself) {
  const cpu::Isa& here = cpu::isa();
  EXPECT_EQ(here.level, cpu::level_of(here.features));
  EXPECT_EQ(here.detected_level, cpu::level_of(here.detected));
  EXPECT_LE(here.level, here.detected_level);
  if (!here.cap) {
    EXPECT_EQ(cpu::describe(here.features), cpu::describe(here.detected));
  }
  // The device's slug and level say the same.
  const auto ex = make_executor(Backend::cpu);
  const DeviceInfo& d = ex->device();
  if (here.x86_64) {
    EXPECT_EQ(d.isa, cpu::to_string(here.level));
    EXPECT_NE(d.slug.rfind("-" + d.isa), std::string::npos) << d.slug;
    const CpuCapabilities c = host_cpu_capabilities();
    EXPECT_EQ(c.onednn_bf16_matmul, !cpu::onednn_info().bf16_matmul_missing);
    EXPECT_EQ(c.detected_level, cpu::to_string(here.detected_level));
  }
}

TEST(CpuCapabilities, RequirementsRoundTripAndShapeOnesAreNotCapabilities) {
  for (auto c : {cpu::Capability::avx2_fma, cpu::Capability::avx512bf16, cpu::Capability::onednn_bf16_matmul}) {
    const Requirement r = cpu::needs(c);
    EXPECT_EQ(cpu::capability_of(r), c) << r.text;
    // The requirement holds exactly when nothing is missing, whatever the shape.
    EXPECT_EQ(r.holds(Shape{}), !cpu::missing(c)) << r.text;
  }
  EXPECT_FALSE(cpu::capability_of(Requirement{"C % 8 == 0", [](const Shape&) { return true; }}));
}

// Every rung built on a library capability or instruction set states it, so that a CPU
// without it skips the rung instead of failing in it.
TEST(CpuCapabilities, TheRungsThatNeedThemSayso) {
  const Registry& reg = Registry::global();
  struct Need {
    const char* op;
    int id;
    cpu::Capability capability;
  };
  for (const Need& n :
       {Need{"matmul_forward_bf16", 3, cpu::Capability::avx512bf16},
        Need{"matmul_forward_bf16", 4, cpu::Capability::onednn_bf16_matmul},
        Need{"matmul_backward_bf16", 3, cpu::Capability::onednn_bf16_matmul},
        Need{"matmul_gelu_forward_bf16", 2, cpu::Capability::onednn_bf16_matmul},
        Need{"softmax_forward", 4, cpu::Capability::avx2_fma}, Need{"fused_classifier", 4, cpu::Capability::avx2_fma},
        Need{"gelu_forward", 4, cpu::Capability::avx2_fma}, Need{"gelu_backward", 4, cpu::Capability::avx2_fma}}) {
    const Variant& v = reg.variant(n.op, Backend::cpu, n.id);
    bool states = false;
    for (const Requirement& r : v.requirements) states = states || cpu::capability_of(r) == n.capability;
    EXPECT_TRUE(states) << v.key() << " does not state " << cpu::name_of(n.capability);
    DeviceInfo host;
    host.backend = Backend::cpu;
    const auto refusal = why_cannot_run(reg, v, parse_shape("B=2,T=8,C=32,OC=16"), v.default_params(), host);
    if (auto why = cpu::missing(n.capability)) {
      ASSERT_TRUE(refusal) << v.key();
      EXPECT_EQ(refusal->reason, *why);
      EXPECT_EQ(refusal->kind, Refusal::Kind::device);
    }
  }
}

// The oneDNN answer and the ISA answer agree where both are known: Debian 12's oneDNN
// makes bf16 matmuls on AVX-512 CPUs and not below (a newer oneDNN may do more).
TEST(CpuCapabilities, OneDnnAnswersOnce) {
  const cpu::OneDnnInfo& info = cpu::onednn_info();
  EXPECT_FALSE(info.version.empty());
  EXPECT_FALSE(info.isa.empty());
  if (info.bf16_matmul_missing) {
    EXPECT_NE(info.bf16_matmul_missing->find("oneDNN"), std::string::npos);
  }
  if (cpu::isa().x86_64 && cpu::isa().level >= IsaLevel::avx512 && info.cap.empty()) {
    EXPECT_FALSE(info.bf16_matmul_missing) << info.bf16_matmul_missing.value_or("");
  }
  EXPECT_EQ(&cpu::onednn_info(), &info);
}

// The cap is real: run as a user runs it, a rung that needs AVX-512 is skipped with the
// reason under WB_CPU_ISA=avx2, whatever this CPU has; and the report says so.
TEST(CpuCap, AnAvx512RungIsSkippedUnderTheCap) {
  const std::string capped = "env WB_CPU_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell " WB_BINARY;
  const testing::Result r =
      testing::run_command(capped, "run matmul_forward_bf16 --variant 3 --backend cpu --shape B=2,T=8,C=32,OC=16");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("SKIPPED needs AVX512-BF16"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("this CPU has AVX2, FMA"), std::string::npos) << r.output;
  const testing::Result dnn =
      testing::run_command(capped, "run matmul_forward_bf16 --variant 4 --backend cpu --shape B=2,T=8,C=32,OC=16");
  EXPECT_EQ(dnn.code, 0) << dnn.output;
  EXPECT_NE(dnn.output.find("SKIPPED needs oneDNN's bf16 matmul"), std::string::npos) << dnn.output;
  const testing::Result list = testing::run_command(capped, "list matmul_forward_bf16");
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("skipped here: needs AVX512-BF16"), std::string::npos) << list.output;
  const testing::Result slug = testing::run_command(capped, "device --backend cpu --slug");
  EXPECT_EQ(slug.code, 0) << slug.output;
  if (cpu::isa().x86_64) {
    EXPECT_NE(slug.output.find("-avx2\n"), std::string::npos) << slug.output;
  }
  // The AVX2 rungs still run under it.
  const testing::Result avx2 =
      testing::run_command(capped, "run softmax_forward --variant 4 --backend cpu --shape B=2,T=8,V=50,Vp=64");
  if (cpu::isa().detected_level >= IsaLevel::avx2) {
    EXPECT_EQ(avx2.code, 0) << avx2.output;
    EXPECT_NE(avx2.output.find("% of the tolerance"), std::string::npos) << avx2.output;
  }
}

TEST(CpuCap, BelowAvx2TheAvx2RungsSkipToo) {
  const testing::Result r = testing::run_command(
      "env WB_CPU_ISA=sse2 " WB_BINARY, "run softmax_forward --variant 4 --backend cpu --shape B=2,T=8,V=50,Vp=64");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("SKIPPED needs AVX2 and FMA (x86-64-v3)"), std::string::npos) << r.output;
}

// The fp32 trainer builds and runs no oneDNN primitive (it measured oneDNN's bf16 matmul
// for its MFU line once, and died on CPUs where oneDNN makes none); the bf16 trainer
// does where oneDNN can (the control: ONEDNN_VERBOSE shows what oneDNN runs).
TEST(CpuCap, TheFp32TrainerRunsNoOneDnnPrimitive) {
  testing::TempDir dir;
  std::vector<int32_t> tokens(4096);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t((i * 7919) % 97);
  trainer::write_tokens(dir / "train.bin", tokens);
  const std::string args = "--backend cpu --init 1,32,2 -b 2 -t 16 --steps 2 --train " + (dir / "train.bin");
  const testing::Result fp32 = testing::run_command("env ONEDNN_VERBOSE=2 " WB_TRAINER, args);
  EXPECT_EQ(fp32.code, 0) << fp32.output;
  EXPECT_EQ(fp32.output.find("onednn_verbose"), std::string::npos) << fp32.output;
  if (cpu::onednn_info().bf16_matmul_missing) GTEST_SKIP() << "the control needs oneDNN's bf16 matmul";
  const testing::Result bf16 = testing::run_command("env ONEDNN_VERBOSE=2 " WB_TRAINER, args + " --precision bf16");
  EXPECT_EQ(bf16.code, 0) << bf16.output;
  EXPECT_NE(bf16.output.find("onednn_verbose"), std::string::npos) << bf16.output;
}

TEST(CpuCap, AMistypedCapIsBadInput) {
  EXPECT_EXIT_WITH(testing::run_command("env WB_CPU_ISA=avx-512 " WB_BINARY, "list layernorm_forward"), 2,
                   "WB_CPU_ISA is 'avx-512', not one of sse2, avx2, avx512, avx512bf16, amx");
  EXPECT_EXIT_WITH(testing::run_command("env WB_CPU_ISA=avx3 " WB_TRAINER, "--backend cpu --init 1,32,2 --steps 1"), 2,
                   "WB_CPU_ISA is 'avx3'");
}

}  // namespace
}  // namespace wb
