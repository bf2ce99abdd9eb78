// The emulator's counters (emu/emu.h, SiteCounters) on kernels whose figures are known
// exactly: a coalesced and a strided global load, a transposed shared tile with and
// without padding, a half-warp branch, a 64-bit shared load, ldmatrix's rows with and
// without bank conflicts, cp.async's two requests, half-warps taking turns at one
// instruction (a request a turn) and taking it together (one request). Compiled for the emulator
// (WB_EMU); the plain build only (the sanitized ones report no accesses).
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "emu/shim.h"  // first: this file is CUDA source compiled for the emulator

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "device/cuda/tensor_core_ptx.cuh"
#include "emu/cublas.h"
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

// Every block's warp copies its 32 floats.
__global__ void strided_copy_blocks(float* out, const float* in) {
  const int i = blockIdx.x * 32 + threadIdx.x;
  out[i] = in[i];
}

// Every block's 128 threads copy their float.
__global__ void wide_copy_blocks(float* out, const float* in) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i];
}

// Every block adds its 64 values into the same 64 floats: its first warp into acc[0..31],
// its second into acc[32..63] (the partial sums of a reduction into one vector).
__global__ void split_sum(float* acc, const float* in) {
  atomicAdd(&acc[threadIdx.x], in[blockIdx.x * 64 + threadIdx.x]);
}

// The same 32 atomic adds a warp, into the first float of every float4 of acc: a warp's
// request spans 512 bytes (16 sectors, two lanes on each) where split_sum's spans 128
// (4 sectors of 8 lanes).
__global__ void strided_sum(float* acc, const float* in) {
  atomicAdd(&acc[4 * threadIdx.x], in[blockIdx.x * 32 + threadIdx.x]);
}

// Lanes 0-15 sum their values with a shuffle over their half-warp, the others do not.
__global__ void half_warp_sum(float* out, const float* in) {
  const int i = threadIdx.x;
  if (i < 16) out[i] = in[i] + __shfl_xor_sync(0xffffu, in[i], 1);
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

// ldmatrix.x4 by a full warp from a shared tile of 32 rows of `kPitch` bf16: lane l
// gives row l, at l * kPitch * 2 bytes. A pitch of 8 (16 bytes) packs the rows; a pitch
// of 64 (128 bytes) puts the 8 rows of each phase in the same 4 banks.
template <int kPitch>
__global__ void ldmatrix_rows(uint32_t* out) {
  WB_SHARED_ALIGNED(16, __nv_bfloat16, tile, [32 * kPitch]);
  const int lane = threadIdx.x;
  for (int i = lane; i < 32 * kPitch; i += 32) tile[i] = __float2bfloat16(float(i % 7));
  __syncthreads();
  uint32_t r[4];
  cuda::tc::ldmatrix_x4(r, tile + lane * kPitch);
  for (int j = 0; j < 4; ++j) out[4 * lane + j] = r[j];
}

// A full warp copies 16 bytes a lane from global to shared memory with cp.async.
__global__ void cp_async_copy(float* out, const float* in) {
  WB_SHARED_ALIGNED(16, float, s, [128]);
  const int lane = threadIdx.x;
  cuda::tc::cp_async_cg<16>(s + 4 * lane, in + 4 * lane);
  cuda::tc::cp_async_commit();
  cuda::tc::cp_async_wait_all();
  __syncthreads();
  for (int i = lane; i < 128; i += 32) out[i] = s[i];
}

// What divides the turns of half_warp_turns.
enum class Between { syncwarp, syncthreads, shuffle };

// `rounds` times, the two half-warps take turns at a global load and a shared store
// (half 0 first), kBetween dividing the turns; with kTogether both halves take the first
// turn together. The store puts lane l at word 2l: 16 lanes fill the 16 even banks once
// each, 32 lanes fill them twice (a 2-way conflict, for lanes that store together).
// `turns` is 2, a parameter so that the host compiler keeps one loop (one static site
// for both turns) instead of unrolling it into a site per turn.
template <Between kBetween, bool kTogether>
__global__ void half_warp_turns(float* out, const float* in, int rounds, int turns) {
  WB_SHARED(float, s, [64]);
  const int lane = threadIdx.x;
  float carried = 0.0f;
  for (int r = 0; r < rounds; ++r) {
    for (int turn = 0; turn < turns; ++turn) {
      if (kTogether ? turn == 0 : lane / 16 == turn) s[2 * lane] = in[r * 32 + lane];
      if (kBetween == Between::syncwarp) __syncwarp();
      if (kBetween == Between::syncthreads) __syncthreads();
      if (kBetween == Between::shuffle) carried += __shfl_xor_sync(0xffffffffu, carried, 1);
    }
    out[r * 32 + lane] = s[2 * lane] + carried;
    __syncwarp();  // the next round's stores after this one's loads
  }
}

// Lanes 16-31 shuffle among themselves while lanes 0-15 go on to the load, where the
// others join them: a collective of the other half divides nothing. (The shuffle's
// result is stored apart, so that the host compiler keeps one load for both halves.)
__global__ void other_half_shuffles(float* out, const float* in) {
  const int lane = threadIdx.x;
  if (lane >= 16) out[32 + lane] = __shfl_xor_sync(0xffff0000u, float(lane), 1);
  out[lane] = in[lane];
}

// Row r is the `width` (40) floats from in[8r] (windows that overlap): lanes 0-7 load
// two of them, the others one, then the warp synchronises as a whole (a full-mask
// shuffle, or with kBarrier a __syncthreads). A GPU issues each row's load twice: 32
// lanes (4 sectors), then 8 (1 sector). Lane 0's visits to the load outrun lane 8's by
// one a row: paired by their counts since the block began, the 8 lanes of one row
// would join the 24 of the next, whose sectors overlap theirs.
template <bool kBarrier>
__global__ void overlapping_rows(float* out, const float* in, int rows, int width) {
  const int lane = threadIdx.x;
  for (int r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int i = lane; i < width; i += 32) sum += in[8 * r + i];
    if (kBarrier)
      __syncthreads();
    else
      sum += __shfl_xor_sync(0xffffffffu, sum, 16);
    if (lane == 0) out[r] = sum;
  }
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

// The memory requests of tensor-core instructions (ldmatrix, cp.async), named by their
// call's line; not the collectives (ldmatrix's exchange among the lanes is one).
std::vector<emu::SiteCounters> instruction_sites(const std::vector<emu::LaunchCounters>& launches) {
  std::vector<emu::SiteCounters> out;
  for (const emu::LaunchCounters& l : launches)
    for (const emu::SiteCounters& s : l.sites)
      if (s.instruction_site && !s.collective) out.push_back(s);
  return out;
}

TEST_F(Counters, LdmatrixReadsEightRowsAPhaseAndAPitchOf128BytesConflictsEightWays) {
  Device<uint32_t> out(128);
  WB_LAUNCH(ldmatrix_rows<8>, 1, 32, 0, nullptr, out.p);
  std::vector<emu::SiteCounters> rows = instruction_sites(emu::take_counters());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].shared);
  EXPECT_FALSE(rows[0].store);
  EXPECT_EQ(rows[0].bytes, 16u) << "a 16-byte row a lane";
  EXPECT_EQ(rows[0].requests, 1u);
  EXPECT_EQ(rows[0].active_lanes, 32u);
  EXPECT_EQ(rows[0].wavefronts, 4u) << "512 contiguous bytes: four phases of eight rows, no conflict";
  EXPECT_EQ(rows[0].ideal_wavefronts, 4u);
  EXPECT_NE(std::string(rows[0].instruction_site).find("tests/emu/test_counters.cpp:"), std::string::npos)
      << rows[0].instruction_site;

  WB_LAUNCH(ldmatrix_rows<64>, 1, 32, 0, nullptr, out.p);
  rows = instruction_sites(emu::take_counters());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].wavefronts, 32u) << "each phase's eight rows in the same four banks";
  EXPECT_EQ(rows[0].ideal_wavefronts, 4u);
}

TEST_F(Counters, CpAsyncIsAGlobalReadAndASharedWriteOfItsSizeAndTheModelsOwnAccessesAreNot) {
  Device<float> in(128, 1.0f), out(128);
  WB_LAUNCH(cp_async_copy, 1, 32, 0, nullptr, out.p, in.p);
  const std::vector<emu::LaunchCounters> launches = emu::take_counters();
  const std::vector<emu::SiteCounters> copies = instruction_sites(launches);
  ASSERT_EQ(copies.size(), 2u) << "the read and the write, at the call's line";
  for (const emu::SiteCounters& s : copies) {
    EXPECT_EQ(s.bytes, 16u);
    EXPECT_EQ(s.requests, 1u);
    if (s.shared) {
      EXPECT_TRUE(s.store);
      EXPECT_EQ(s.wavefronts, 4u);
      EXPECT_EQ(s.ideal_wavefronts, 4u);
    } else {
      EXPECT_FALSE(s.store);
      EXPECT_EQ(s.sectors, 16u);
      EXPECT_EQ(s.ideal_sectors, 16u);
    }
  }
  // Beside them only the kernel's own: the shared reads and global writes of the copy
  // out, no poison write or landing of the model's.
  int others = 0;
  for (const emu::SiteCounters& s : launches.at(0).sites)
    if (!s.instruction_site && !s.collective) {
      ++others;
      EXPECT_EQ(s.shared, !s.store) << "a shared read or a global write";
    }
  EXPECT_EQ(others, 2);
}

TEST_F(Counters, ASampleCountsTheFirstTheLastAndEvenlyBetweenOfEveryBlockThatRuns) {
  emu::set_counting(true, 3);
  Device<float> in(320, 1.0f), out(320);
  WB_LAUNCH(strided_copy_blocks, 10, 32, 0, nullptr, out.p, in.p);
  const std::vector<emu::LaunchCounters> launches = emu::take_counters();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].blocks, 10u);
  EXPECT_EQ(launches[0].counted_blocks, 3u) << "blocks 0, 4 and 9";
  for (const emu::SiteCounters& s : launches[0].sites) EXPECT_EQ(s.requests, 3u) << "one a counted block";
  for (int i = 0; i < 320; ++i) ASSERT_EQ(out.p[i], 1.0f) << "every block ran: element " << i;
}

TEST_F(Counters, OnlySampledRunsTheSampleAloneAndCountsUpToFourWarpsOfEachBlock) {
  emu::set_counting(true, 2, true);
  Device<float> in(10240, 1.0f), out(10240, 0.0f);
  WB_LAUNCH(wide_copy_blocks, 10, 128, 0, nullptr, out.p, in.p);
  std::vector<emu::LaunchCounters> launches = emu::take_counters();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].counted_blocks, 2u) << "blocks 0 and 9";
  EXPECT_EQ(launches[0].warps, 40u);
  EXPECT_EQ(launches[0].counted_warps, 8u) << "every warp of a block of 4";
  for (const emu::SiteCounters& s : launches[0].sites) EXPECT_EQ(s.requests, 8u);
  for (int i = 0; i < 1280; ++i)
    ASSERT_EQ(out.p[i], (i < 128 || i >= 1152) ? 1.0f : 0.0f) << "only blocks 0 and 9 ran: element " << i;
  // Blocks of 32 warps: 4 of each count, the first, the last and evenly between (warps
  // 0, 10, 20 and 31), each a request of its load and one of its store.
  WB_LAUNCH(wide_copy_blocks, 10, 1024, 0, nullptr, out.p, in.p);
  launches = emu::take_counters();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].warps, 320u);
  EXPECT_EQ(launches[0].counted_warps, 8u);
  for (const emu::SiteCounters& s : launches[0].sites) EXPECT_EQ(s.requests, 8u);
  EXPECT_EQ(launches[0].read_footprint.distinct, 8u * 4) << "4 sectors a counted warp";
}

TEST_F(Counters, TheFootprintIsCountedWarpByWarpAndBlockByBlock) {
  // A sample of three blocks of four (0, 1 and 3): block-by-block footprints are counted
  // where blocks are sampled, since only a grid's estimate from a sample needs them.
  emu::set_counting(true, 3);
  Device<float> acc(64, 0.0f), in(256, 1.0f);
  WB_LAUNCH(split_sum, 4, 64, 0, nullptr, acc.p, in.p);
  const std::vector<emu::LaunchCounters> launches = emu::take_counters();
  ASSERT_EQ(launches.size(), 1u);
  const emu::LaunchCounters& l = launches[0];
  EXPECT_EQ(l.counted_blocks, 3u);
  // The atomics: 6 counted warps of 32 addresses (4 sectors) each, 64 addresses (8
  // sectors) together; each block its 8 sectors, every block the same 8.
  EXPECT_EQ(l.atomic_ops, 192u);
  EXPECT_EQ(l.atomic_sector_ops, 24u) << "6 requests of 4 sectors";
  EXPECT_EQ(l.atomic_sectors.per_warp, 24u);
  EXPECT_EQ(l.atomic_sectors.distinct, 8u);
  EXPECT_EQ(l.atomic_sectors.warps, 6u);
  EXPECT_EQ(l.atomic_sectors.per_block, 24u);
  EXPECT_EQ(l.atomic_sectors.blocks, 3u);
  // The reads: each warp its own 32 floats (4 sectors), each block its own 8 sectors.
  EXPECT_EQ(l.read_footprint.per_warp, 24u);
  EXPECT_EQ(l.read_footprint.distinct, 24u);
  EXPECT_EQ(l.read_footprint.per_block, 24u);
  EXPECT_EQ(l.read_footprint.blocks, 3u);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(acc.p[i], 4.0f) << "every block ran: " << i;
}

TEST_F(Counters, AnAtomicRequestIsAnOperationOnEachSectorItTouches) {
  Device<float> acc(128, 0.0f), in(128, 1.0f);
  WB_LAUNCH(strided_sum, 4, 32, 0, nullptr, acc.p, in.p);
  const std::vector<emu::LaunchCounters> launches = emu::take_counters();
  ASSERT_EQ(launches.size(), 1u);
  const emu::LaunchCounters& l = launches[0];
  EXPECT_EQ(l.atomic_ops, 128u) << "as many lanes as split_sum's 4 warps";
  EXPECT_EQ(l.atomic_sector_ops, 4u * 16) << "but 16 sectors a request, not 4";
  EXPECT_EQ(l.atomic_sectors.distinct, 16u);
  EXPECT_EQ(l.atomic_sectors.per_block, 0u) << "every block counted: no block-by-block footprint";
  for (int i = 0; i < 128; ++i) ASSERT_EQ(acc.p[i], i % 4 == 0 ? 4.0f : 0.0f) << i;
}

// An emulated cuBLAS call is listed with its work whenever it is counted, but computed
// only when its result can matter: not while only the sampled blocks run (nothing is
// validated then, and the host GEMMs of the classifier at the trainer's shapes would
// cost minutes of wb predict).
TEST_F(Counters, ALibraryCallComputesUnlessOnlySampledBlocksRun) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  Device<float> a(4, 1.0f), b(4, 2.0f), c(4);
  const float one = 1.0f, zero = 0.0f;
  for (bool only_sampled : {true, false}) {
    emu::set_counting(true, 2, only_sampled);
    for (int i = 0; i < 4; ++i) c.p[i] = -1.0f;
    ASSERT_EQ(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, a.p, 2, b.p, 2, &zero, c.p, 2),
              CUBLAS_STATUS_SUCCESS);
    const std::vector<emu::LaunchCounters> launches = emu::take_counters();
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_DOUBLE_EQ(launches[0].library_flops, 16.0) << "2 m n k";
    for (int i = 0; i < 4; ++i) EXPECT_EQ(c.p[i], only_sampled ? -1.0f : 4.0f) << "only_sampled " << only_sampled;
  }
  EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
}

TEST_F(Counters, AWarpCollectiveCountsItsActiveLanesAtItsLine) {
  Device<float> in(32, 1.0f), out(32);
  WB_LAUNCH(half_warp_sum, 1, 32, 0, nullptr, out.p, in.p);
  const std::vector<emu::LaunchCounters> launches = emu::take_counters();
  ASSERT_EQ(launches.size(), 1u);
  int collectives = 0;
  for (const emu::SiteCounters& s : launches[0].sites)
    if (s.collective) {
      ++collectives;
      EXPECT_EQ(s.requests, 1u) << "one group";
      EXPECT_EQ(s.active_lanes, 16u);
      EXPECT_NE(std::string(s.instruction_site).find("tests/emu/test_counters.cpp:"), std::string::npos)
          << s.instruction_site;
    }
  EXPECT_EQ(collectives, 1);
}

// The global load and the shared store of half_warp_turns at `rounds` rounds.
struct TurnSites {
  emu::SiteCounters load, store;
};
template <Between kBetween, bool kTogether>
TurnSites turn_sites(int rounds) {
  emu_testing::DeviceArray<float> in(std::size_t(32 * rounds), 1.0f), out(std::size_t(32 * rounds));
  WB_LAUNCH((half_warp_turns<kBetween, kTogether>), 1, 32, 0, nullptr, out.p, in.p, rounds, 2);
  const std::vector<emu::LaunchCounters> launches = emu::take_counters();
  TurnSites t;
  EXPECT_EQ(launches.size(), 1u);
  if (launches.empty()) return t;
  for (const emu::SiteCounters& s : launches[0].sites) {
    if (s.collective) continue;
    if (!s.shared && !s.store) t.load += s;
    if (s.shared && s.store) t.store += s;
  }
  return t;
}

template <Between kBetween>
void expect_turns_apart(const char* what) {
  SCOPED_TRACE(what);
  for (int rounds : {1, 5}) {
    SCOPED_TRACE("rounds " + std::to_string(rounds));
    const uint64_t n = uint64_t(rounds);
    const TurnSites turns = turn_sites<kBetween, false>(rounds);
    EXPECT_EQ(turns.load.requests, 2 * n) << "a request per turn";
    EXPECT_EQ(turns.load.active_lanes, 32 * n) << "16 lanes a request";
    EXPECT_EQ(turns.load.sectors, 4 * n) << "2 sectors a request, as for 16 lanes";
    EXPECT_EQ(turns.load.ideal_sectors, 4 * n);
    EXPECT_EQ(turns.store.requests, 2 * n);
    EXPECT_EQ(turns.store.active_lanes, 32 * n);
    EXPECT_EQ(turns.store.wavefronts, 2 * n) << "16 lanes in 16 banks: no conflict";
    EXPECT_EQ(turns.store.ideal_wavefronts, 2 * n);

    const TurnSites together = turn_sites<kBetween, true>(rounds);
    EXPECT_EQ(together.load.requests, n) << "both halves in one request";
    EXPECT_EQ(together.load.active_lanes, 32 * n);
    EXPECT_EQ(together.load.sectors, 4 * n);
    EXPECT_EQ(together.load.ideal_sectors, 4 * n);
    EXPECT_EQ(together.store.requests, n);
    EXPECT_EQ(together.store.wavefronts, 2 * n) << "32 lanes in 16 banks: a 2-way conflict";
    EXPECT_EQ(together.store.ideal_wavefronts, n);
  }
}

TEST_F(Counters, HalfWarpsTakingTurnsAcrossASyncwarpAreARequestEach) {
  expect_turns_apart<Between::syncwarp>("__syncwarp");
}

TEST_F(Counters, HalfWarpsTakingTurnsAcrossASyncthreadsAreARequestEach) {
  expect_turns_apart<Between::syncthreads>("__syncthreads");
}

TEST_F(Counters, HalfWarpsTakingTurnsAcrossAShuffleAreARequestEach) {
  expect_turns_apart<Between::shuffle>("a full-warp shuffle");
}

template <bool kBarrier>
void expect_rows_apart() {
  const int rows = 3;
  emu_testing::DeviceArray<float> in(8 * (rows - 1) + 40, 1.0f), out(rows);
  WB_LAUNCH(overlapping_rows<kBarrier>, 1, 32, 0, nullptr, out.p, in.p, rows, 40);
  const std::vector<emu::LaunchCounters> launches = emu::take_counters();
  ASSERT_EQ(launches.size(), 1u);
  emu::AccessCounts loads;
  for (const emu::SiteCounters& s : launches[0].sites)
    if (!s.collective && !s.shared && !s.store) loads += s;
  EXPECT_EQ(loads.requests, 2u * rows);
  EXPECT_EQ(loads.active_lanes, 40u * rows) << "32 and 8 lanes a row";
  EXPECT_EQ(loads.sectors, 5u * rows) << "4 and 1 sectors a row (14 if rows were joined)";
  EXPECT_EQ(loads.ideal_sectors, 5u * rows);
}

TEST_F(Counters, AShuffleOfTheWholeWarpPairsTheVisitsAfterItAfresh) { expect_rows_apart<false>(); }

TEST_F(Counters, ASyncthreadsPairsTheVisitsAfterItAfresh) { expect_rows_apart<true>(); }

TEST_F(Counters, ACollectiveOfTheOtherHalfDividesNoTurn) {
  Device<float> in(32, 1.0f), out(64);
  WB_LAUNCH(other_half_shuffles, 1, 32, 0, nullptr, out.p, in.p);
  std::vector<emu::SiteCounters> loads;
  for (const emu::SiteCounters& s : sites(false, false))
    if (!s.collective) loads.push_back(s);
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(loads[0].requests, 1u) << "lanes 0-15 waited at the load for the others";
  EXPECT_EQ(loads[0].active_lanes, 32u);
  EXPECT_EQ(loads[0].sectors, 4u);
}

TEST_F(Counters, CountingIsOffByDefaultAndCountsNothingThen) {
  emu::set_counting(false);
  Device<float> in(64, 1.0f), out(32);
  WB_LAUNCH(strided_copy, 1, 32, 0, nullptr, out.p, in.p, 1);
  EXPECT_TRUE(emu::take_counters().empty());
}

}  // namespace
}  // namespace wb::emu_counters
