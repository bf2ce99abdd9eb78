// The ceilings' consistency rule (above_ceiling), the roofline's bandwidth, and the cpu
// streams' measurement: pre-faulted buffers, every stream measured. No timing thresholds:
// the rates are only required to exist.
#include <gtest/gtest.h>

#include <filesystem>

#include "workbench/runtime/ceilings.h"
#include "workbench/runtime/cpu_memory_ceilings.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

constexpr int64_t kLlc = int64_t(32) << 20;

TEST(Ceilings, AboveTheRooflineBeyondTheCacheIsFlagged) {
  // adamw at N = 124M on the committed CPU sweep: 3.5 GB at 224% of the roofline.
  EXPECT_TRUE(above_ceiling(224.4, 3.485e9, kLlc));
  EXPECT_TRUE(above_ceiling(100.5, 2.0 * double(kLlc), kLlc));
}

TEST(Ceilings, BelowTheRooflineOrInsideTheCacheIsNotFlagged) {
  EXPECT_FALSE(above_ceiling(82.9, 3.485e9, kLlc));         // large, below the roofline
  EXPECT_FALSE(above_ceiling(100.0, 3.485e9, kLlc));        // at it exactly
  EXPECT_FALSE(above_ceiling(150.0, 1.7e6, kLlc));          // above it from cache: honest
  EXPECT_FALSE(above_ceiling(150.0, double(kLlc), kLlc));   // the cache's size itself fits
  EXPECT_FALSE(above_ceiling(224.4, 3.485e9, 0));           // the cache size unknown
}

TEST(Ceilings, TheRooflineTakesTheMemoryCeilingWhereThereIsOne) {
  Ceilings c;
  c.copy_gbps = 30;
  c.fp32_tflops = 1;
  const double bytes = 60e9, flops = 1;  // memory bound: 2 s at 30 GB/s, 1 s at 60 GB/s
  EXPECT_NEAR(percent_of_peak(c, NumericClass::fp32, bytes, flops, 1.0).roofline, 200, 1e-9);
  c.memory_gbps = 60;
  EXPECT_NEAR(percent_of_peak(c, NumericClass::fp32, bytes, flops, 1.0).roofline, 100, 1e-9);
  EXPECT_NEAR(percent_of_peak(c, NumericClass::fp32, bytes, flops, 1.0).copy, 200, 1e-9);  // still of the copy
}

TEST(Ceilings, TwoMeasurementsKeepTheFasterOfEachRate) {
  // Each rate as the two measurements took it, and the one kept: the faster, whichever
  // measurement took it.
  struct Rate {
    const char* name;
    double Ceilings::*field;
    double first, second, kept;
  };
  const Rate rates[] = {
      {"copy_gbps", &Ceilings::copy_gbps, 35, 30, 35},         {"read_gbps", &Ceilings::read_gbps, 33, 36, 36},
      {"update_gbps", &Ceilings::update_gbps, 54, 57, 57},     {"memory_gbps", &Ceilings::memory_gbps, 54, 57, 57},
      {"fp32_tflops", &Ceilings::fp32_tflops, 0.2, 0.19, 0.2}, {"bf16_tflops", &Ceilings::bf16_tflops, 0.4, 0.5, 0.5},
      {"tf32_tflops", &Ceilings::tf32_tflops, 0, 0.1, 0.1},
  };
  Ceilings before, after;
  for (const Rate& r : rates) {
    before.*r.field = r.first;
    after.*r.field = r.second;
  }
  before.stream_bytes = 256 << 20, before.threads = 2, before.method = "streams";
  after.stream_bytes = 1, after.threads = 9;
  const Ceilings c = faster_of(before, after, "; twice");
  for (const Rate& r : rates) EXPECT_EQ(c.*r.field, r.kept) << r.name;
  EXPECT_EQ(c.stream_bytes, 256 << 20);  // the first measurement's sizes
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.method, "streams; twice");
}

// A ceiling one measurement could not take is absent only when neither took it; a class
// without its own matrix ceiling is taken against fp32's, and says why.
TEST(Ceilings, AbsentCeilingsStayAbsentAndFallBackToFp32) {
  Ceilings a, b;
  a.fp32_tflops = 0.2;
  a.absent["bf16_tflops"] = "no bf16 matmul here";
  a.absent["tf32_tflops"] = "no tf32 on a CPU";
  b.fp32_tflops = 0.3;
  b.tf32_tflops = 0.5;
  b.absent["bf16_tflops"] = "no bf16 matmul here either";
  const Ceilings c = faster_of(a, b, "");
  EXPECT_EQ(c.absent.size(), 1u);
  EXPECT_EQ(c.matmul_absent(NumericClass::bf16), "no bf16 matmul here");
  EXPECT_EQ(c.matmul_absent(NumericClass::tf32), "");
  EXPECT_EQ(c.matmul_absent(NumericClass::fp32), "");
  EXPECT_EQ(c.matmul_tflops(NumericClass::bf16), 0.3);  // fp32's
  EXPECT_EQ(c.matmul_tflops(NumericClass::tf32), 0.5);
  EXPECT_EQ(matmul_field(NumericClass::bf16), "bf16_tflops");
}

TEST(Ceilings, ARecordAboveTheCeilingIsFlaggedInItsJson) {
  Ceilings c;
  c.copy_gbps = 30;
  c.fp32_tflops = 1;
  Record r;
  r.op = "adamw";
  r.bytes = 3.485e9;
  r.flops = 2e9;
  r.timing = TimingStats{};
  r.timing->median_s = 0.05;  // 70 GB/s against 30
  EXPECT_TRUE(to_json(r, c, kLlc)["throughput"]["above_ceiling"].get<bool>());
  EXPECT_FALSE(to_json(r, c, 0)["throughput"]["above_ceiling"].get<bool>());  // no cache size: no verdict
  r.timing->median_s = 0.5;  // 7 GB/s
  EXPECT_FALSE(to_json(r, c, kLlc)["throughput"]["above_ceiling"].get<bool>());
}

TEST(HostStreams, BuffersArePrefaultedBeforeAnythingIsTimed) {
  // 32 MiB per buffer: 8192 pages each. A pass over cold buffers would fault every page
  // of what it writes; warm, the timed passes fault (almost) none.
  const HostStreams s = measure_host_streams(std::size_t(32) << 20, 2, 2);
  EXPECT_EQ(s.bytes, std::size_t(32) << 20);
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.repetitions, 2);
  EXPECT_LT(s.faults_while_timed, 256) << "page faults inside the timed passes";
  EXPECT_GT(s.read_gbps, 0);
  EXPECT_GT(s.copy_gbps, 0);
  EXPECT_GT(s.update_gbps, 0);
}

// Unknown only where sysfs says nothing (the microVMs this project runs on: below); a
// machine with sysfs cache entries always has a size.
TEST(HostStreams, TheLastLevelCacheIsFoundWhereSysfsDescribesIt) {
  if (!std::filesystem::exists("/sys/devices/system/cpu/cpu0/cache/index0/size"))
    GTEST_SKIP() << "no sysfs cache information here (last-level cache " << host_llc_bytes() << " bytes)";
  EXPECT_GT(host_llc_bytes(), 0u);
}

TEST(HostStreams, AmdCpuidL3IsBelievedOnlyWhereItIsTheSliceTheThreadsShare) {
  // This project's 2-vCPU Zen 5 VMs: EDX 0x0fe09140, 1016 x 512 KiB with L3Assoc 9h (the
  // figures are leaf 0x8000001D's, which the VM does not offer): unknown.
  EXPECT_EQ(amd_cpuid_l3_bytes(0x0fe09140u), std::size_t(0));
  // An older part: 16 x 512 KiB, 16-way (8h): its L3.
  EXPECT_EQ(amd_cpuid_l3_bytes((16u << 18) | (0x8u << 12) | 0x140u), std::size_t(8) << 20);
  // A disabled L3 (0h): no answer, the caller goes on to the L2.
  EXPECT_FALSE(amd_cpuid_l3_bytes((16u << 18) | 0x140u).has_value());
}

}  // namespace
}  // namespace wb
