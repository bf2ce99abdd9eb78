// The emulator's counters (emu/emu.h, SiteCounters) on kernels whose figures are known
// exactly: a coalesced and a strided global load, a transposed shared tile with and
// without padding, a half-warp branch, a 64-bit shared load. Compiled for the emulator
// (WB_EMU); the plain build only (the sanitized ones report no accesses).
#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/dialect.cuh"
#include "emu/shim.h"  // first: this file is CUDA source compiled for the emulator

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "emu/emu.h"
#include "tests/emu/emu_testing.h"

namespace wb::emu_counters {
namespace {

template <class T>
using Device = emu_testing::DeviceArray<T>;

// A full warp copies in[stride * i] to out[i].
__global__ void strided_copy(float* out, const float* in, int stride) {
  const int i = threadIdx.x;
  out[i] = in[stride * i];
}

// A full warp copies a float4 each, through the 128-bit accesses of device_utils.cuh.
__global__ void float4_copy(float* out, const float* in) {
  const int i = threadIdx.x;
  cuda::store4(out + 4 * i, cuda::load4(in + 4 * i));
}

// Lanes 0-15 copy their element, the others do nothing.
__global__ void half_warp_copy(float* out, const float* in) {
  const int i = threadIdx.x;
  if (i % 32 < 16) out[i] = in[i];
}

// A 32 x 32 tile through shared memory, written by rows and read by columns (a
// transpose): without padding every lane of a column read hits one bank.
template <int kPad>
__global__ void transpose_tile(float* out, const float* in) {
  WB_SHARED(float, tile, [32][32 + kPad]);
  const int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = in[y * 32 + x];
  __syncthreads();
  out[y * 32 + x] = tile[x][y];
}

// A full warp loads one 8-byte word of shared memory each (two phases of 16 lanes).
__global__ void shared_pairs(double* out) {
  WB_SHARED(double, s, [32]);
  const int i = threadIdx.x;
  s[i] = double(i);
  __syncthreads();
  out[i] = s[i];
}

class Counters : public emu_testing::EmuTest {
 protected:
  void SetUp() override {
    EmuTest::SetUp();
    if (!emu::reports_accesses())
      GTEST_SKIP() << "the plain build's access reports (this is the " << emu::flavour() << " flavour)";
    emu::set_counting(true);
    emu::take_counters();
  }
  void TearDown() override {
    if (emu::reports_accesses()) emu::set_counting(false);
    EmuTest::TearDown();
  }

  // The one launch's sites of one kind: global or shared, loads or stores.
  static std::vector<emu::SiteCounters> sites(bool shared, bool store) {
    const std::vector<emu::LaunchCounters> launches = emu::take_counters();
    EXPECT_EQ(launches.size(), 1u);
    std::vector<emu::SiteCounters> out;
    if (launches.empty()) return out;
    for (const emu::SiteCounters& s : launches[0].sites)
      if (s.shared == shared && s.store == store) out.push_back(s);
    return out;
  }
};

TEST_F(Counters, ACoalescedFloatLoadIsFourSectorsAndAStrideOfTwoIsEight) {
  Device<float> in(64, 1.0f), out(32);
  WB_LAUNCH(strided_copy, 1, 32, 0, nullptr, out.p, in.p, 1);
  std::vector<emu::SiteCounters> loads = sites(false, false);
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(loads[0].requests, 1u);
  EXPECT_EQ(loads[0].active_lanes, 32u);
  EXPECT_EQ(loads[0].bytes, 4u);
  EXPECT_EQ(loads[0].sectors, 4u);
  EXPECT_EQ(loads[0].ideal_sectors, 4u);

  WB_LAUNCH(strided_copy, 1, 32, 0, nullptr, out.p, in.p, 2);
  loads = sites(false, false);
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(loads[0].requests, 1u);
  EXPECT_EQ(loads[0].sectors, 8u) << "256 bytes apart: every other float of 8 sectors";
  EXPECT_EQ(loads[0].ideal_sectors, 4u) << "the 128 bytes the lanes need";
}

TEST_F(Counters, ACoalescedFloat4LoadIsOneRequestOfSixteenSectors) {
  Device<float> in(128, 1.0f), out(128);
  WB_LAUNCH(float4_copy, 1, 32, 0, nullptr, out.p, in.p);
  const std::vector<emu::LaunchCounters> launches = emu::take_counters();
  ASSERT_EQ(launches.size(), 1u);
  for (const emu::SiteCounters& s : launches[0].sites) {
    EXPECT_EQ(s.bytes, 16u) << "one 16-byte access a lane, as the CUDA source says";
    EXPECT_EQ(s.requests, 1u);
    EXPECT_EQ(s.sectors, 16u) << "512 bytes";
    EXPECT_EQ(s.ideal_sectors, 16u);
  }
  EXPECT_EQ(launches[0].sites.size(), 2u) << "the load and the store";
}

TEST_F(Counters, AHalfWarpBranchHasSixteenActiveLanes) {
  Device<float> in(64, 1.0f), out(64);
  WB_LAUNCH(half_warp_copy, 1, 64, 0, nullptr, out.p, in.p);
  const std::vector<emu::SiteCounters> loads = sites(false, false);
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(loads[0].requests, 2u) << "one per warp";
  EXPECT_EQ(loads[0].active_lanes, 32u) << "16 a request";
  EXPECT_EQ(loads[0].sectors, 4u);
  EXPECT_EQ(loads[0].ideal_sectors, 4u);
}

TEST_F(Counters, ATransposedTileConflictsThirtyTwoWaysWithoutPaddingAndNotAtAllWithIt) {
  Device<float> in(1024, 1.0f), out(1024);
  WB_LAUNCH(transpose_tile<0>, 1, dim3(32, 32), 0, nullptr, out.p, in.p);
  std::vector<emu::SiteCounters> reads = sites(true, false);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0].requests, 32u);
  EXPECT_EQ(reads[0].wavefronts, 32u * 32u) << "a column of 32 words in one bank";
  EXPECT_EQ(reads[0].ideal_wavefronts, 32u);

  WB_LAUNCH(transpose_tile<1>, 1, dim3(32, 32), 0, nullptr, out.p, in.p);
  reads = sites(true, false);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0].wavefronts, 32u) << "padded: a column spans all 32 banks";
  EXPECT_EQ(reads[0].ideal_wavefronts, 32u);
}

TEST_F(Counters, ASixtyFourBitSharedLoadIsTwoWavefrontsWithoutConflict) {
  Device<double> out(32);
  WB_LAUNCH(shared_pairs, 1, 32, 0, nullptr, out.p);
  const std::vector<emu::SiteCounters> reads = sites(true, false);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0].bytes, 8u);
  EXPECT_EQ(reads[0].requests, 1u);
  EXPECT_EQ(reads[0].wavefronts, 2u);
  EXPECT_EQ(reads[0].ideal_wavefronts, 2u);
}

TEST_F(Counters, CountingIsOffByDefaultAndCountsNothingThen) {
  emu::set_counting(false);
  Device<float> in(64, 1.0f), out(32);
  WB_LAUNCH(strided_copy, 1, 32, 0, nullptr, out.p, in.p, 1);
  EXPECT_TRUE(emu::take_counters().empty());
}

}  // namespace
}  // namespace wb::emu_counters
