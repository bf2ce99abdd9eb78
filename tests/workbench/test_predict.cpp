// The prediction of wb predict (workbench/runtime/predict.h) on counters made up here,
// whose predicted times follow from the stated model by hand; the rank correlation on
// series whose Spearman coefficient is known; and counting a configuration in
// emulation with a sample of blocks that alone run.
#include <gtest/gtest.h>

#include <cmath>

#include "base/errors.h"
#include "contract/registry.h"
#include "emu/emu.h"
#include "workbench/runtime/predict.h"

namespace wb {
namespace {

DeviceModel h200_like() {
  DeviceModel d;
  d.sms = 100;
  d.clock_hz = 2e9;
  d.compute_capability = 90;
  d.ceilings.copy_gbps = 4000;
  d.ceilings.fp32_tflops = 50;
  return d;
}

// One kernel of `blocks` blocks of 256 threads, 64 resident warps per SM, whose global
// requests each touch `sectors_per_request` sectors.
Counters one_kernel(uint64_t blocks, uint64_t requests, uint64_t sectors_per_request, uint64_t wavefronts = 0) {
  KernelCount k;
  k.kernel = "k";
  k.threads = 256;
  k.launches = 1;
  k.blocks = k.counted_blocks = blocks;
  k.warps = k.counted_warps = blocks * 8;
  k.occupancy.push_back(Occupancy{90, 8, 64, 64, "warps"});
  SiteCount load;
  load.site = "variants/x/01_x.cu:1";
  load.bytes = 4;
  load.requests = requests;
  load.active_lanes = 32 * requests;
  load.sectors = sectors_per_request * requests;
  load.ideal_sectors = 4 * requests;
  k.sites.push_back(load);
  if (wavefronts) {
    SiteCount shared;
    shared.site = "variants/x/01_x.cu:2";
    shared.shared = true;
    shared.bytes = 4;
    shared.requests = 1;
    shared.wavefronts = shared.ideal_wavefronts = wavefronts;
    k.sites.push_back(shared);
  }
  Counters c;
  c.kernels.push_back(k);
  return c;
}

// The model's memory time: the sectors' bytes pay for the copy ceiling and for their
// share of the latency, with `in_flight` bytes in flight.
double memory_seconds(double bytes, double active_sms, double warps, double bytes_per_request) {
  const double in_flight = active_sms * warps * bytes_per_request * kRequestsInFlight / kLatencySeconds;
  return bytes * (1 / 4e12 + 1 / in_flight);
}

TEST(Predict, AFullMachineOfCoalescedLoadsPaysForTheCopyCeilingAndTheLatency) {
  // 1e6 requests of 4 sectors: 128 MB, 128 bytes a request, 100 SMs of 64 warps.
  const Prediction p = predict_time(one_kernel(800, 1000000, 4), 1e6, 0, NumericClass::fp32, h200_like());
  EXPECT_NEAR(p.seconds, kLaunchSeconds + memory_seconds(128e6, 100, 64, 128), 1e-12);
  EXPECT_EQ(p.bound, "memory");
}

TEST(Predict, AnUncoalescedLoadCostsItsSectorsAndAFewBlocksLeaveSmsIdle) {
  const DeviceModel d = h200_like();
  const double coalesced = predict_time(one_kernel(800, 1000000, 4), 0, 0, NumericClass::fp32, d).seconds;
  const double strided = predict_time(one_kernel(800, 1000000, 8), 0, 0, NumericClass::fp32, d).seconds;
  EXPECT_NEAR(strided - kLaunchSeconds, memory_seconds(256e6, 100, 64, 256), 1e-12);
  EXPECT_GT(strided, coalesced);
  // 10 blocks: 10 SMs of 8 warps each.
  const double few = predict_time(one_kernel(10, 1000000, 4), 0, 0, NumericClass::fp32, d).seconds;
  EXPECT_NEAR(few - kLaunchSeconds, memory_seconds(128e6, 10, 8, 128), 1e-12);
  EXPECT_GT(few, coalesced);
}

TEST(Predict, TheByteAndFlopModelsBoundItAndALibraryRungIsPredictedByThemAlone) {
  const DeviceModel d = h200_like();
  // The op's flop model (1e9 at 50 TFLOP/s: 20 us) above what the counters say.
  const Prediction flops = predict_time(one_kernel(800, 1000, 4), 0, 1e9, NumericClass::fp32, d);
  EXPECT_NEAR(flops.seconds, kLaunchSeconds + 20e-6, 1e-12);
  EXPECT_EQ(flops.bound, "flops");
  const Prediction library = predict_time(std::nullopt, 4e6, 0, NumericClass::fp32, d);
  EXPECT_NEAR(library.seconds, kLaunchSeconds + 1e-6, 1e-12);
  EXPECT_EQ(library.bound, "model");
}

TEST(Predict, SharedWavefrontsTakeAClockEachOnEveryActiveSm) {
  const Prediction p = predict_time(one_kernel(800, 1, 4, 2000000000), 0, 0, NumericClass::fp32, h200_like());
  EXPECT_NEAR(p.seconds, kLaunchSeconds + 2e9 / (100 * 2e9), 1e-12);
  EXPECT_EQ(p.bound, "shared");
}

TEST(CountersJson, RoundTripsEveryFieldAndRefusesAnImpossibleSite) {
  Counters c = one_kernel(800, 1000, 8, 64);
  SiteCount shuffle;
  shuffle.site = "variants/x/01_x.cu:3";
  shuffle.collective = true;
  shuffle.requests = 10;
  shuffle.active_lanes = 160;
  c.kernels[0].sites.push_back(shuffle);
  KernelCount gemm;
  gemm.kernel = "cublasSgemm";
  gemm.library = true;
  gemm.launches = 2;
  gemm.flops = 1e9;
  gemm.bytes = 3e6;
  c.kernels.push_back(gemm);
  c.sample_blocks = 8;
  const nlohmann::json j = to_json(c);
  const Counters back = counters_from_json(j, "record");
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.totals().collectives, 10u);
  EXPECT_DOUBLE_EQ(back.totals().lanes_per_collective(), 16.0);
  EXPECT_DOUBLE_EQ(back.totals().sectors_per_request(), 8.0);

  nlohmann::json bad = j;
  bad["kernels"][0]["sites"][0]["ideal_sectors"] = 9000;  // more than the 8000 sectors
  EXPECT_THROW(counters_from_json(bad, "record"), UsageError);
  bad = j;
  bad["kernels"][0]["sites"][0]["kind"] = "texture load";
  EXPECT_THROW(counters_from_json(bad, "record"), UsageError);
}

TEST(RankCorrelation, IsOneForTheSameOrderMinusOneReversedAndAveragesTies) {
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {10, 20, 30, 400}), 1.0);
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ranks (1.5, 1.5, 3) against (1, 2, 3), about their mean 2: covariance 0.5 + 0 + 1,
  // variances 0.25 + 0.25 + 1 and 1 + 0 + 1.
  EXPECT_NEAR(rank_correlation({5, 5, 7}, {1, 2, 3}), 1.5 / std::sqrt(1.5 * 2.0), 1e-12);
  EXPECT_EQ(rank_correlation({1}, {2}), 0.0);
}

TEST(CountingSession, CountsASampleOfBlocksThatAloneRunAndScalesToEveryBlock) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "counting needs the plain build (this is the " << emu::flavour() << ")";
  const Registry& reg = Registry::global();
  const OpSpec& op = reg.op("residual_forward");
  const Variant* naive = reg.find("residual_forward", Backend::emu, 1);
  ASSERT_NE(naive, nullptr);
  Shape shape;
  shape.set("B", 4);
  shape.set("T", 64);
  shape.set("C", 64);  // 16384 elements: 128 blocks of 128 threads
  auto emu = make_executor(Backend::emu);
  CountingSession session(reg, op, shape, 3, *emu);
  ParamValues params;
  params.set("block_size", 128);
  const Counters every = session.count(*naive, naive->complete(params), 0);
  const Counters sampled = session.count(*naive, naive->complete(params), 2);
  ASSERT_EQ(every.kernels.size(), 1u);
  ASSERT_EQ(sampled.kernels.size(), 1u);
  EXPECT_EQ(every.kernels[0].blocks, 128u);
  EXPECT_EQ(every.kernels[0].counted_blocks, 128u);
  EXPECT_EQ(every.kernels[0].warps, 512u);
  EXPECT_EQ(every.kernels[0].counted_warps, 512u);
  // Two blocks counted, of them two warps each, scaled by 128 to every warp: this
  // kernel's warps do alike.
  const CounterTotals a = every.totals(), b = sampled.totals();
  EXPECT_EQ(a.global_requests, 128u * 4 * 3) << "two loads and a store a warp, 4 warps a block";
  EXPECT_EQ(b.global_requests, a.global_requests);
  EXPECT_EQ(b.sectors, a.sectors);
}

}  // namespace
}  // namespace wb
