// The prediction of wb predict (workbench/runtime/predict.h) on counters made up here,
// each term planted alone so that its predicted time follows from the stated model by
// hand; the footprint's estimate from a sample; the fit and the scores
// (predict_score.h) on points made by known constants; the rank correlation on series
// whose Spearman coefficient is known; and counting a configuration in emulation with a
// sample of blocks that alone run.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "base/errors.h"
#include "contract/registry.h"
#include "emu/emu.h"
#include "workbench/runtime/predict.h"
#include "workbench/runtime/predict_score.h"

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

// Constants that leave one term of the model at a round figure and the others out, so
// that each test sees the term it plants.
ModelConstants only(double ModelConstants::*term, double value) {
  ModelConstants m;
  for (double ModelConstants::*c :
       {&ModelConstants::wave_s, &ModelConstants::load_s, &ModelConstants::hit_s, &ModelConstants::store_s,
        &ModelConstants::sector_clocks, &ModelConstants::wavefront_clocks, &ModelConstants::collective_clocks,
        &ModelConstants::same_sector_s, &ModelConstants::block_s})
    m.*c = 0;
  m.dram_efficiency = m.l2_efficiency = 1e30;  // infinitely fast: out of the max
  m.launch_s = 1e-6;
  m.*term = value;
  return m;
}

TEST(Predict, AWarpsChainPaysEachLoadAndStoreInTurnOncePerWave) {
  // 800 blocks of 8 warps, 8 resident per SM (64 warps), 100 SMs: one wave. A warp's
  // share of 1e6 requests over 6400 warps: 156.25 loads.
  ModelConstants m = only(&ModelConstants::load_s, 1e-7);
  m.wave_s = 1e-6;
  const Prediction p =
      predict_time(one_kernel(800, 1000000, 4), 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m);
  EXPECT_NEAR(p.seconds, 1e-6 + (1e-6 + 1e6 / 6400.0 * 1e-7), 1e-12);
  EXPECT_EQ(p.bound, "chain");
  // Twice the blocks: two waves, each a chain of the same length (the requests per warp
  // halve: the same 1e6 over twice the warps).
  const Prediction two =
      predict_time(one_kernel(1600, 2000000, 4), 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m);
  EXPECT_NEAR(two.seconds, 1e-6 + 2 * (1e-6 + 1e6 / 6400.0 * 1e-7), 1e-12);
  // 801 blocks: a tail wave of one block costs a whole chain.
  const Prediction tail =
      predict_time(one_kernel(801, 801 * 1250, 4), 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m);
  EXPECT_NEAR(tail.seconds, 1e-6 + 2 * (1e-6 + 156.25 * 1e-7), 1e-12);
}

// Model 7: a warp's loads of sectors it read before hit in its SM's L1, and cost hit_s
// in its chain instead of load_s. The share that misses is the warp's own distinct
// sectors over the sectors it reads.
TEST(Predict, AWarpsLoadsOfSectorsItReadBeforeCostAnL1HitInItsChain) {
  ModelConstants m = only(&ModelConstants::load_s, 1e-7);
  m.hit_s = 2e-8;
  const double loads = 1e6 / 6400.0;  // a warp's, as above
  auto chain = [&](const Counters& c) {
    return predict_time(c, 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m).seconds - 1e-6;
  };
  Counters c = one_kernel(800, 1000000, 4);                // 4e6 sectors read
  c.kernels[0].read_footprint = {1000000, 1000000, 6400};  // a quarter of them each warp's own: 3 loads in 4 hit
  EXPECT_NEAR(chain(c), loads * (0.25 * 1e-7 + 0.75 * 2e-8), 1e-12);
  c.kernels[0].read_footprint = {4000000, 4000000, 6400};  // every sector read once: every load a miss
  EXPECT_NEAR(chain(c), loads * 1e-7, 1e-12);
  // Counters without a footprint (made by hand) take every load as a miss.
  EXPECT_NEAR(chain(one_kernel(800, 1000000, 4)), loads * 1e-7, 1e-12);
}

TEST(Predict, AnSmsPipesIssueItsWarpsSectorsAndWavefronts) {
  // 64 warps an SM, each 1e6 * 8 / 6400 = 1250 sectors at 2 clocks, at 2 GHz.
  const ModelConstants m = only(&ModelConstants::sector_clocks, 2);
  const Prediction strided =
      predict_time(one_kernel(800, 1000000, 8), 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m);
  EXPECT_NEAR(strided.seconds, 1e-6 + 64 * 1250 * 2 / 2e9, 1e-12);
  EXPECT_EQ(strided.bound, "issue");
  const Prediction coalesced =
      predict_time(one_kernel(800, 1000000, 4), 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m);
  EXPECT_NEAR(coalesced.seconds - 1e-6, (strided.seconds - 1e-6) / 2, 1e-12) << "half the sectors, half the time";
  // 10 blocks: 10 SMs of 8 warps, each warp now 1e6 * 4 / 80 sectors.
  const Prediction few =
      predict_time(one_kernel(10, 1000000, 4), 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m);
  EXPECT_NEAR(few.seconds, 1e-6 + 8 * (4e6 / 80) * 2 / 2e9, 1e-12);
  // Shared wavefronts alike: 2e9 over 6400 warps, a clock each.
  const Prediction banks = predict_time(one_kernel(800, 1, 4, 2000000000), 0, 0, NumericClass::fp32, NumericClass::fp32,
                                        h200_like(), only(&ModelConstants::wavefront_clocks, 1));
  EXPECT_NEAR(banks.seconds, 1e-6 + 64 * (2e9 / 6400) / 2e9, 1e-12);
}

TEST(Predict, TheChainAndThePipesOverlapInPart) {
  ModelConstants m = only(&ModelConstants::load_s, 1e-7);
  m.sector_clocks = 2;
  const double chain = 1e6 / 6400.0 * 1e-7, issue = 64 * 1250 * 2 / 2e9;
  const Prediction p =
      predict_time(one_kernel(800, 1000000, 8), 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m);
  EXPECT_NEAR(p.seconds, 1e-6 + std::hypot(chain, issue), 1e-12);
}

// A kernel whose counted warps touched `distinct` sectors, read and written alike.
Counters with_footprint(uint64_t distinct) {
  Counters c = one_kernel(800, 1000, 4);
  c.kernels[0].read_footprint = {distinct, distinct, 6400};
  c.kernels[0].write_footprint = {distinct, distinct, 6400};
  return c;
}

TEST(Predict, MemoryBehindTheCachesServesEachDistinctSectorOnce) {
  ModelConstants m = only(&ModelConstants::dram_efficiency, 0.5);
  // 2 x 1e6 sectors of 32 bytes at half of 4 TB/s.
  const Prediction p =
      predict_time(with_footprint(1000000), 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m);
  EXPECT_NEAR(p.seconds, 1e-6 + 64e6 / 2e12, 1e-12);
  EXPECT_EQ(p.bound, "dram");
  // What the L1s ask of the L2 pays its bandwidth, 10 TB/s in full: each warp's own
  // distinct sectors read (1e6 here, of the 4e6 requested: a warp reads each sector it
  // reads four times, the repeats hitting in its SM's L1), and every sector stored.
  m = only(&ModelConstants::l2_efficiency, 1);
  DeviceModel d = h200_like();
  d.l2_gbps = 10000;
  Counters reread = one_kernel(800, 1000000, 4);
  reread.kernels[0].read_footprint = {1000000, 1000, 6400};
  const Prediction l2 = predict_time(reread, 0, 0, NumericClass::fp32, NumericClass::fp32, d, m);
  EXPECT_NEAR(l2.seconds, 1e-6 + 1e6 * 32 / 1e13, 1e-12);
  EXPECT_EQ(l2.bound, "l2");
}

TEST(Predict, AtomicsOnOneSectorWaitForEachOther) {
  // 2000 warp requests, each of 32 lanes on 4 sectors, into the same 8 sectors (64
  // floats): 8000 sector operations, 1000 on each.
  Counters c = one_kernel(800, 1000, 4);
  c.kernels[0].atomic_ops = 64000;
  c.kernels[0].atomic_sector_ops = 8000;
  c.kernels[0].atomic_sectors = {8, 8, 6400};
  const Prediction p = predict_time(c, 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(),
                                    only(&ModelConstants::same_sector_s, 1e-8));
  EXPECT_NEAR(p.seconds, 1e-6 + 1000 * 1e-8, 1e-12);
  EXPECT_EQ(p.bound, "atomics");
  // A request's lanes on one sector are one operation: 1000 single-lane requests on one
  // float wait as long as the 1000 full-warp requests on each of the 8 sectors above.
  Counters single = one_kernel(800, 1000, 4);
  single.kernels[0].atomic_ops = 1000;
  single.kernels[0].atomic_sector_ops = 1000;
  single.kernels[0].atomic_sectors = {1, 1, 1000};
  EXPECT_NEAR(predict_time(single, 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(),
                           only(&ModelConstants::same_sector_s, 1e-8))
                  .seconds,
              p.seconds, 1e-12);
  // They wait while the kernel's other work goes on: the longer of the two, not the sum
  // (a warp's chain of 1e-6 + 1000 / 6400 loads of 1e-4 s here).
  ModelConstants m = only(&ModelConstants::same_sector_s, 1e-8);
  m.wave_s = 1e-6;
  m.load_s = 1e-4;
  const Prediction longer = predict_time(c, 0, 0, NumericClass::fp32, NumericClass::fp32, h200_like(), m);
  EXPECT_NEAR(longer.seconds, 1e-6 + 1e-6 + 1000 / 6400.0 * 1e-4, 1e-12);
  EXPECT_EQ(longer.bound, "chain");
}

TEST(Predict, StoresGoThroughToTheL2) {
  ModelConstants m = only(&ModelConstants::l2_efficiency, 1);
  DeviceModel d = h200_like();
  d.l2_gbps = 10000;
  Counters c = one_kernel(800, 1000000, 4);
  c.kernels[0].sites[0].store = true;  // 4e6 sectors stored, none read
  const Prediction p = predict_time(c, 0, 0, NumericClass::fp32, NumericClass::fp32, d, m);
  EXPECT_NEAR(p.seconds, 1e-6 + 4e6 * 32 / 1e13, 1e-12);
  EXPECT_EQ(p.bound, "l2");
}

TEST(Predict, AnSmStartsItsBlocksOneByOne) {
  // 100 000 blocks over 100 SMs: 1000 each, 1e-7 s apart, however little each does.
  const Prediction p = predict_time(one_kernel(100000, 1000, 4), 0, 0, NumericClass::fp32, NumericClass::fp32,
                                    h200_like(), only(&ModelConstants::block_s, 1e-7));
  EXPECT_NEAR(p.seconds, 1e-6 + 1000 * 1e-7, 1e-12);
  EXPECT_EQ(p.bound, "blocks");
  // 150 blocks: two on the busiest SM.
  const Prediction few = predict_time(one_kernel(150, 1000, 4), 0, 0, NumericClass::fp32, NumericClass::fp32,
                                      h200_like(), only(&ModelConstants::block_s, 1e-7));
  EXPECT_NEAR(few.seconds, 1e-6 + 2e-7, 1e-12);
}

TEST(Predict, TheFlopModelBoundsItAndALibraryRungIsPredictedByTheOpsModels) {
  const DeviceModel d = h200_like();
  ModelConstants m = only(&ModelConstants::load_s, 1e-9);
  // The op's flop model (1e9 at 50 TFLOP/s: 20 us) above what the counters say.
  const Prediction flops = predict_time(one_kernel(800, 1000, 4), 0, 1e9, NumericClass::fp32, NumericClass::fp32, d, m);
  EXPECT_NEAR(flops.seconds, 1e-6 + 20e-6, 1e-12);
  EXPECT_EQ(flops.bound, "flops");
  m.library_efficiency = 0.5;
  const Prediction library = predict_time(std::nullopt, 4e6, 0, NumericClass::fp32, NumericClass::fp32, d, m);
  EXPECT_NEAR(library.seconds, 1e-6 + 2e-6, 1e-12);
  EXPECT_EQ(library.bound, "model");
}

TEST(Footprint, TheGridsDistinctSectorsAreEstimatedFromWhatCountedWarpsShare) {
  KernelCount k = one_kernel(800, 1000, 4).kernels[0];
  k.counted_warps = 4;  // of 6400
  // Four warps touched 100 sectors each, 40 of them the same for all: a grid of 6400
  // warps touches 60 of its own each and the shared 40 once.
  k.read_footprint = {400, 4 * 60 + 40, 4};
  EXPECT_NEAR(k.distinct_sectors(false), 6400 * 60 + 40, 1e-6);
  // Only two of the four touched any (lane 0 of a block's first warp, say): so do half
  // of the grid's warps.
  k.read_footprint = {200, 200, 2};
  EXPECT_NEAR(k.distinct_sectors(false), 3200 * 100, 1e-6);
  // Never more than the buffers the accesses touched.
  k.touched_bytes = 32 * 1000;
  EXPECT_NEAR(k.distinct_sectors(false), 1000, 1e-6);
  // Counted in full, the count itself.
  k.counted_warps = k.warps;
  k.touched_bytes = 0;
  EXPECT_NEAR(k.distinct_sectors(false), 200, 1e-6);
}

TEST(Footprint, BlocksThatAddIntoOneVectorAreSeenBlockByBlock) {
  // layernorm_backward's atomic rungs: each block of 2 warps adds its partial sums into
  // the same 1536 sectors, its first warp into 768 of them, its second into the other
  // 768. Two blocks counted (4 warps) of 2048.
  KernelCount k = one_kernel(2048, 1000, 4).kernels[0];
  k.threads = 64;
  k.warps = 4096;
  k.counted_blocks = 2;
  k.counted_warps = 4;
  k.atomic_ops = 4 * 768;
  // Warp by warp alone, the four warps share a third of what each touches, so every
  // further warp of the grid would add 512 sectors: a million, not 1536.
  k.atomic_sectors = {4 * 768, 1536, 4};
  EXPECT_NEAR(k.distinct_atomic_sectors(), 4096 * 768 - 4095 * 512, 1e-6);
  // Block by block, the two blocks touched the same 1536: so does every block.
  k.atomic_sectors = {4 * 768, 1536, 4, 2 * 1536, 2};
  EXPECT_NEAR(k.distinct_atomic_sectors(), 1536, 1e-6);
  // Blocks of their own rows (nothing shared between the two): every block adds its own.
  k.read_footprint = {4 * 100, 400, 4, 400, 2};
  EXPECT_NEAR(k.distinct_sectors(false), 2048 * 200, 1e-6);
  // A single touching warp a block (lane 0 of the first warp adds the block's sum into one
  // float): the warp-by-warp estimate, the smaller, stands.
  k.threads = 1024;
  k.warps = 2048 * 32;
  k.atomic_sectors = {2, 1, 2, 2, 2};
  EXPECT_NEAR(k.distinct_atomic_sectors(), 1, 1e-6);
}

// Two ops, "a" and "b", each at 1, 2 and 4 waves of a chain-bound kernel, measured as
// the model predicts them with load_s at load_s_a and load_s_b.
std::vector<ScoredPoint> two_ops(const DeviceModel& d, double load_s_a, double load_s_b) {
  std::vector<ScoredPoint> points;
  for (const char* op : {"a", "b"})
    for (uint64_t blocks : {800, 1600, 3200}) {
      ScoredPoint p;
      p.op = op;
      p.pair = std::string(op) + " at N=1";
      p.counters = one_kernel(blocks, blocks * 1000, 4);
      const ModelConstants truth = only(&ModelConstants::load_s, op[0] == 'a' ? load_s_a : load_s_b);
      p.measured_s = predict_time(p.counters, 0, 0, NumericClass::fp32, NumericClass::fp32, d, truth).seconds;
      points.push_back(p);
    }
  return points;
}

// Every constant's name but load_s: what those fits keep fixed.
std::set<std::string> all_but_load_s() {
  std::set<std::string> fixed;
  for (const ModelConstants::Named& c : ModelConstants::all())
    if (std::string(c.name) != "load_s") fixed.insert(c.name);
  return fixed;
}

TEST(PredictScore, FitsConstantsAndScoresOutOfSampleWithoutTheHeldOutOp) {
  // Two ops whose measured times follow the model with load_s = 2e-7; the fit from
  // 1e-7 finds it (within its factors' grid) and, left out, each op is predicted by the
  // other's fit.
  const DeviceModel d = h200_like();
  const std::vector<ScoredPoint> points = two_ops(d, 2e-7, 2e-7);
  ModelConstants start = only(&ModelConstants::load_s, 1e-7);
  const std::set<std::string> fixed = all_but_load_s();
  const ModelConstants fitted = fit_constants(points, d, start, fixed);
  EXPECT_NEAR(fitted.load_s, 2e-7, 2e-7 * 0.06);
  EXPECT_EQ(fitted.launch_s, start.launch_s) << "a fixed constant stays";
  const std::vector<double> out = leave_one_op_out(points, d, start, fixed);
  const Scores s = score(points, out);
  ASSERT_EQ(s.pairs.size(), 2u);
  EXPECT_LT(s.mape, 0.06);
  EXPECT_EQ(s.picks_within_5, 2u);
  EXPECT_EQ(s.best_in_top3, 2u);
  // The prior's predictions: right order, wrong scale.
  std::vector<double> prior;
  for (const ScoredPoint& p : points)
    prior.push_back(predict_time(p.counters, 0, 0, NumericClass::fp32, NumericClass::fp32, d, start).seconds);
  const Scores sp = score(points, prior);
  EXPECT_GT(sp.mape, 0.2);
  ASSERT_TRUE(sp.pairs[0].spearman.has_value());
  EXPECT_DOUBLE_EQ(*sp.pairs[0].spearman, 1.0);
}

// Fits shrink toward the prior (model 7). Where every op's times follow one truth, the
// plain fit finds it and leave-one-op-out chooses no shrinkage; a shrunk fit stops
// nearer the prior. Where the ops disagree (each fitted alone, the other is predicted
// badly), the choice shrinks: the prior between them predicts each better.
TEST(PredictScore, AFitShrinksTowardThePriorWhereTheOpsDisagree) {
  const DeviceModel d = h200_like();
  const ModelConstants start = only(&ModelConstants::load_s, 1e-7);
  const std::set<std::string> fixed = all_but_load_s();

  const std::vector<ScoredPoint> agree = two_ops(d, 2e-7, 2e-7);
  EXPECT_EQ(choose_shrinkage(agree, d, start, fixed), 0.0);
  const double plain = fit_constants(agree, d, start, fixed, 0).load_s;
  const double shrunk = fit_constants(agree, d, start, fixed, 1).load_s;
  EXPECT_NEAR(plain, 2e-7, 2e-7 * 0.06);
  EXPECT_LT(shrunk, plain * 0.95) << "a shrunk fit stops nearer the prior";
  EXPECT_GE(shrunk, start.load_s);

  const std::vector<ScoredPoint> disagree = two_ops(d, 2e-7, 0.5e-7);
  EXPECT_GT(choose_shrinkage(disagree, d, start, fixed), 0.0);
  // A single op: nothing to hold out, no shrinkage.
  const std::vector<ScoredPoint> one_op(disagree.begin(), disagree.begin() + 3);
  EXPECT_EQ(choose_shrinkage(one_op, d, start, fixed), 0.0);
}

TEST(PredictScore, RanksOnlyConfigurationsMoreThanTwoPercentApartAndScoresThePick) {
  std::vector<ScoredPoint> points(4);
  const double measured[] = {10, 10.1, 12, 20};  // 10.1 is within 2% of 10: not ranked
  for (int i = 0; i < 4; ++i) points[i].pair = "x", points[i].op = "x", points[i].measured_s = measured[i];
  const Scores s = score(points, {3, 1, 2, 4});  // picks 10.1: within 5% of the best
  ASSERT_EQ(s.pairs.size(), 1u);
  EXPECT_EQ(s.pairs[0].distinct, 3u);
  ASSERT_TRUE(s.pairs[0].spearman.has_value());
  EXPECT_DOUBLE_EQ(*s.pairs[0].spearman, 0.5);  // (3, 2, 4) against (10, 12, 20)
  EXPECT_EQ(s.pairs[0].pick, 1u);
  EXPECT_TRUE(s.pairs[0].pick_within_5);
  EXPECT_TRUE(s.pairs[0].best_in_top3);
  const Scores wrong = score(points, {4, 3, 2, 1});  // picks the slowest
  EXPECT_FALSE(wrong.pairs[0].pick_within_5);
  EXPECT_FALSE(wrong.pairs[0].best_in_top3);
  EXPECT_DOUBLE_EQ(wrong.pairs[0].pick_ratio, 2.0);
}

// One emulated library GEMM kernel (cuBLAS), its calls at one problem.
Counters one_gemm(int64_t m, int64_t n, int64_t k, int64_t batch, uint64_t calls) {
  KernelCount g;
  g.kernel = "cublasSgemmStridedBatched";
  g.library = true;
  g.launches = calls;
  g.flops = 2.0 * double(m) * double(n) * double(k) * double(batch) * double(calls);
  g.bytes = 1;  // out of the max
  g.gemms.push_back({m, n, k, batch, calls});
  Counters c;
  c.kernels.push_back(g);
  return c;
}

// The library's tiles (128 x 128) over the SMs in waves: with 100 SMs and no wave cost,
// the ceiling's square GEMM (n = 8192: 4096 tiles, 41 waves) takes 2 n^3 / 50 TFLOP/s,
// and a GEMM of one more tile than the SMs takes the two waves of one of 200 tiles (at a
// depth of 384, too shallow to split).
TEST(Predict, ALibraryGemmRunsInWavesOfTilesAtTheRateOfTheCeilingsGemm) {
  const DeviceModel d = h200_like();
  ModelConstants m = only(&ModelConstants::library_wave_s, 0);
  m.library_efficiency = 1;
  m.launch_s = 0;
  const double n = 8192, reference = 2 * n * n * n / 50e12;
  const Prediction square =
      predict_time(one_gemm(8192, 8192, 8192, 1, 1), 0, 0, NumericClass::fp32, NumericClass::fp32, d, m);
  EXPECT_NEAR(square.seconds, reference, reference * 1e-12);
  EXPECT_EQ(square.bound, "library");
  const double per_wave_per_depth = reference / 41 / n;
  const double full =
      predict_time(one_gemm(1280, 1280, 384, 1, 1), 0, 0, NumericClass::fp32, NumericClass::fp32, d, m).seconds;
  EXPECT_NEAR(full, 384 * per_wave_per_depth, full * 1e-12);  // 100 tiles: one wave
  const double tail =
      predict_time(one_gemm(1280, 1408, 384, 1, 1), 0, 0, NumericClass::fp32, NumericClass::fp32, d, m).seconds;
  EXPECT_NEAR(tail, 2 * full, full * 1e-12);  // 110 tiles: a second wave for 10 of them
  const double full_twice =
      predict_time(one_gemm(1280, 2560, 384, 1, 1), 0, 0, NumericClass::fp32, NumericClass::fp32, d, m).seconds;
  EXPECT_NEAR(full_twice, tail, full * 1e-12);  // 200 tiles: the same two waves
  // A narrow matrix takes a narrower tile: n = 64 halves each tile, and 200 tiles of
  // 128 x 64 (two waves) take the time of one wave of full tiles.
  const double narrow =
      predict_time(one_gemm(128, 64, 384, 200, 1), 0, 0, NumericClass::fp32, NumericClass::fp32, d, m).seconds;
  EXPECT_NEAR(narrow, full, full * 1e-12);
  // A deep GEMM of few tiles is split along k where that takes less time: 110 tiles 4096
  // deep take 2 waves of 4096 whole, 9 waves of 512 split in 8 (or 18 of 256 in 16).
  const double deep =
      predict_time(one_gemm(1280, 1408, 4096, 1, 1), 0, 0, NumericClass::fp32, NumericClass::fp32, d, m).seconds;
  EXPECT_NEAR(deep, 9 * 512 * per_wave_per_depth, deep * 1e-12);
  // Calls add up; the wave's fixed cost is paid per wave.
  EXPECT_NEAR(predict_time(one_gemm(1280, 1280, 384, 1, 3), 0, 0, NumericClass::fp32, NumericClass::fp32, d, m).seconds,
              3 * full, full * 1e-12);
  m.library_wave_s = 1e-6;
  const double paid =
      predict_time(one_gemm(1280, 1408, 384, 1, 1), 0, 0, NumericClass::fp32, NumericClass::fp32, d, m).seconds;
  const double per_depth_paid = (reference - 41 * 1e-6) / 41 / n;
  EXPECT_NEAR(paid, 2 * (384 * per_depth_paid + 1e-6), paid * 1e-12);
  // The efficiency divides it all; the bytes bound it from below.
  m.library_efficiency = 0.5;
  EXPECT_NEAR(predict_time(one_gemm(1280, 1408, 384, 1, 1), 0, 0, NumericClass::fp32, NumericClass::fp32, d, m).seconds,
              2 * paid, paid * 1e-12);
  Counters heavy = one_gemm(1280, 1408, 384, 1, 1);
  heavy.kernels[0].bytes = 4e6;  // 1 us at 4000 GB/s, above the arithmetic of k = 1
  m.library_wave_s = 0;
  m.library_efficiency = 1;
  heavy.kernels[0].gemms[0].k = 1;
  EXPECT_NEAR(predict_time(heavy, 0, 0, NumericClass::fp32, NumericClass::fp32, d, m).seconds, 1e-6, 1e-15);
}

// A library works at the ceiling of the storage it is handed (model 6): a bf16 op's
// library GEMM, of an fp32 accuracy class (fp32 accumulation), at the bf16 tensor-core
// ceiling, not the fp32 CUDA-core one; so is its flop floor, where the rung calls a
// library, and a rung the emulator cannot run. A hand-written kernel's floor stays at its
// own class: the CUDA-core arithmetic the emulator does not see.
TEST(Predict, ALibraryWorksAtTheCeilingOfTheStorageItIsHanded) {
  DeviceModel d = h200_like();
  d.ceilings.bf16_tflops = 800;  // 16 times the fp32 ceiling
  ModelConstants m = only(&ModelConstants::library_wave_s, 0);
  m.library_efficiency = 1;
  m.launch_s = 0;
  const Counters gemm = one_gemm(8192, 8192, 8192, 1, 1);
  const double flops = 2.0 * 8192 * 8192 * 8192;
  const double at_fp32 = predict_time(gemm, 0, flops, NumericClass::fp32, NumericClass::fp32, d, m).seconds;
  const double at_bf16 = predict_time(gemm, 0, flops, NumericClass::fp32, NumericClass::bf16, d, m).seconds;
  EXPECT_NEAR(at_fp32, flops / 50e12, at_fp32 * 1e-12);
  EXPECT_NEAR(at_bf16, flops / 800e12, at_bf16 * 1e-12) << "the flop floor too is the library's ceiling";
  const Prediction unemulated = predict_time(std::nullopt, 0, flops, NumericClass::fp32, NumericClass::bf16, d, m);
  EXPECT_NEAR(unemulated.seconds, flops / 800e12, at_bf16 * 1e-12);
  // A hand-written kernel of class fp32 on the same bf16 op: floored at fp32's ceiling.
  const Prediction kernel = predict_time(one_kernel(1, 1, 4), 0, flops, NumericClass::fp32, NumericClass::bf16, d,
                                         only(&ModelConstants::launch_s, 0));
  EXPECT_EQ(kernel.bound, "flops");
  EXPECT_NEAR(kernel.seconds, flops / 50e12, kernel.seconds * 1e-12);

  const Registry& reg = Registry::global();
  EXPECT_EQ(library_class(reg.op("matmul_forward_bf16"), NumericClass::fp32), NumericClass::bf16);
  EXPECT_EQ(library_class(reg.op("attention_forward_bf16"), NumericClass::bf16), NumericClass::bf16);
  EXPECT_EQ(library_class(reg.op("matmul_forward"), NumericClass::fp32), NumericClass::fp32);
  EXPECT_EQ(library_class(reg.op("matmul_forward"), NumericClass::tf32), NumericClass::tf32);
  // Called with the op, the model takes library_class's ceiling itself.
  EXPECT_EQ(predict_time(gemm, 0, flops, NumericClass::fp32, reg.op("matmul_forward_bf16"), d, m).seconds, at_bf16);
  EXPECT_EQ(predict_time(gemm, 0, flops, NumericClass::fp32, reg.op("matmul_forward"), d, m).seconds, at_fp32);
}

TEST(CountersJson, RoundTripsEveryFieldAndRefusesAnImpossibleSite) {
  Counters c = one_kernel(800, 1000, 8, 64);
  KernelCount no_table = c.kernels[0];  // as a build without nvcc counts it
  no_table.kernel = "k_without_table";
  no_table.occupancy.clear();
  no_table.occupancy_not_computed = "no resource table: this build had no nvcc";
  c.kernels.push_back(no_table);
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
  gemm.gemms = {{768, 2304, 768, 1, 1}, {1024, 1024, 64, 48, 1}};
  c.kernels.push_back(gemm);
  c.sample_blocks = 8;
  const nlohmann::json j = to_json(c);
  const Counters back = counters_from_json(j, "record");
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.kernels.at(1).occupancy_not_computed, "no resource table: this build had no nvcc");
  EXPECT_FALSE(j["kernels"][0].contains("occupancy_not_computed")) << "only where it was not computed";
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
  // Two blocks counted, every warp of each (a block of up to 4 warps counts whole), scaled by 64
  // to every block.
  const CounterTotals a = every.totals(), b = sampled.totals();
  EXPECT_EQ(a.global_requests, 128u * 4 * 3) << "two loads and a store a warp, 4 warps a block";
  EXPECT_EQ(b.global_requests, a.global_requests);
  EXPECT_EQ(b.sectors, a.sectors);
  // Its footprint: two inputs read and one output written, each of 16384 floats once
  // (512 sectors of 32 bytes each 128 floats: 4096 read, 2048 written), counted in full
  // and estimated from the sample's four warps alike.
  EXPECT_EQ(every.kernels[0].read_footprint.distinct, 4096u);
  EXPECT_EQ(every.kernels[0].write_footprint.distinct, 2048u);
  EXPECT_NEAR(sampled.kernels[0].distinct_sectors(false), 4096, 1e-6);
  EXPECT_NEAR(sampled.kernels[0].distinct_sectors(true), 2048, 1e-6);
  EXPECT_EQ(every.kernels[0].atomic_ops, 0u);
}

}  // namespace
}  // namespace wb
