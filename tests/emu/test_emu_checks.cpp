// The emulator's checks on planted bugs (tests/emu/controls.h): each is caught with a
// message that names the check, the kernel and what is wrong; each correct twin
// passes. Compiled for the emulator (WB_EMU), like a variant.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/errors.h"
#include "emu/emu.h"
#include "tests/emu/controls.h"  // first: CUDA source compiled for the emulator
#include "tests/emu/emu_testing.h"

namespace wb::emu_controls {
namespace {

// Device floats, zeroed unless another fill is given.
struct DeviceFloats : emu_testing::DeviceArray<float> {
  explicit DeviceFloats(std::size_t count, float fill = 0.0f) : DeviceArray(count, fill) {}
};
using emu_testing::launch_error;

class EmuChecks : public emu_testing::EmuTest {};

TEST_F(EmuChecks, MissingBarrierLeavesThreadZeroReadingPoison) {
  DeviceFloats in(kThreads, 1.0f), out(1);
  WB_LAUNCH(block_sum, 1, kThreads, 0, nullptr, out.p, in.p, true);
  EXPECT_EQ(out.p[0], float(kThreads));
  // Without the barrier thread 0 (first in forward order) reads words the other
  // threads have not written: still the 0xFF poison of fresh shared memory, NaN.
  WB_LAUNCH(block_sum, 1, kThreads, 0, nullptr, out.p, in.p, false);
  EXPECT_TRUE(std::isnan(out.p[0])) << out.p[0];
}

TEST_F(EmuChecks, OffByOneGlobalWriteIsAMemcheckFaultAndSticky) {
  DeviceFloats out(100);
  const std::string e = launch_error([&] { WB_LAUNCH(off_by_one, 2, 64, 0, nullptr, out.p, 100); });
  EXPECT_NE(e.find("cudaErrorIllegalAddress"), std::string::npos) << e;
  if (emu::reports_accesses()) {
    // The write is caught as it is made: the thread and the line that wrote.
    EXPECT_NE(e.find("memcheck: kernel off_by_one, block (1,0,0), thread (36,0,0): a write of 4 bytes at "),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("0 bytes past the end of a device buffer of 400 bytes, in "), std::string::npos) << e;
    EXPECT_NE(e.find("tests/emu/controls.h:33"), std::string::npos) << e;
  } else {  // a build that reports no accesses finds the write in the canary after the launch
    EXPECT_NE(e.find("memcheck: kernel off_by_one wrote past the end of a device buffer of 400 bytes"),
              std::string::npos)
        << e;
  }
  // Sticky, as on a GPU: the next call fails too, until the context is reset.
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  const std::string again = launch_error([&] { WB_LAUNCH(off_by_one, 1, 64, 0, nullptr, out.p, 10); });
  EXPECT_NE(again.find("cudaErrorIllegalAddress"), std::string::npos) << again;
  emu::reset();
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(off_by_one, 1, 64, 0, nullptr, out.p, 10); }), "");
}

TEST_F(EmuChecks, MisalignedVectorLoadIsAStickyMisalignedAddressFault) {
  DeviceFloats in(4 * kThreads + 1, 1.0f), out(4 * kThreads);
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(copy4, 1, kThreads, 0, nullptr, out.p, in.p); }), "");
  const std::string e = launch_error([&] { WB_LAUNCH(copy4, 1, kThreads, 0, nullptr, out.p, in.p + 1); });
  EXPECT_NE(e.find("cudaErrorMisalignedAddress"), std::string::npos) << e;
  EXPECT_NE(e.find("memcheck: kernel copy4"), std::string::npos) << e;
  EXPECT_NE(e.find("is not 16-byte aligned"), std::string::npos) << e;
  // The accessing line, inside the helper and where the kernel calls it, not the launch's.
  EXPECT_NE(e.find("device/cuda/device_utils.cuh:"), std::string::npos) << e;
  EXPECT_NE(e.find("tests/emu/controls.h:40"), std::string::npos) << e;
  EXPECT_EQ(cudaGetLastError(), cudaErrorMisalignedAddress);
}

TEST_F(EmuChecks, UninitialisedSharedReadShowsAsNaN) {
  DeviceFloats out(kThreads);
  WB_LAUNCH(uninitialised_shared, 1, kThreads, 0, nullptr, out.p);
  for (int i = 0; i + 1 < kThreads; ++i) EXPECT_EQ(out.p[i], float(i + 1));
  EXPECT_TRUE(std::isnan(out.p[kThreads - 1])) << "the word nobody wrote reads as poison";
}

TEST_F(EmuChecks, ShuffleNamingExitedLanesIsASynccheckFault) {
  DeviceFloats out(32);
  const std::string e = launch_error([&] { WB_LAUNCH(shuffle_with_exited_lanes, 1, 32, 0, nullptr, out.p); });
  EXPECT_NE(e.find("synccheck: kernel shuffle_with_exited_lanes, block (0,0,0)"), std::string::npos) << e;
  // In forward order lanes 0-15 reach the shuffle first; then lane 16 exits.
  EXPECT_NE(e.find("lane 16 exits while lanes of its warp wait for it at the collective at tests/emu/controls.h:"),
            std::string::npos)
      << e;
  // Shuffled, a lower lane may arrive after the upper half has gone.
  emu::reset();
  emu::set_schedule({true, 99});
  const std::string late = launch_error([&] { WB_LAUNCH(shuffle_with_exited_lanes, 1, 32, 0, nullptr, out.p); });
  EXPECT_TRUE(late.find("which have exited") != std::string::npos ||
              late.find("exits while lanes") != std::string::npos)
      << late;
}

TEST_F(EmuChecks, BarrierInDivergentBranchesIsASynccheckFault) {
  DeviceFloats out(32);
  const std::string e = launch_error([&] { WB_LAUNCH(divergent_barrier, 1, 32, 0, nullptr, out.p); });
  EXPECT_NE(e.find("synccheck: kernel divergent_barrier, block (0,0,0): threads wait at different __syncthreads"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("tests/emu/controls.h:"), std::string::npos) << "names the lines: " << e;
}

TEST_F(EmuChecks, ShuffleAgainstABarrierIsADeadlock) {
  DeviceFloats out(32);
  const std::string e = launch_error([&] { WB_LAUNCH(shuffle_against_barrier, 1, 32, 0, nullptr, out.p); });
  EXPECT_NE(e.find("synccheck"), std::string::npos) << e;
  EXPECT_NE(e.find("for lanes 16,"), std::string::npos) << e;
  EXPECT_NE(e.find("waits at __syncthreads"), std::string::npos) << e;
}

TEST_F(EmuChecks, BlockOf2048ThreadsIsRefusedLikeOnAGpu) {
  DeviceFloats out(4096);
  const std::string e = launch_error([&] { WB_LAUNCH(off_by_one, 1, 2048, 0, nullptr, out.p, 100); });
  EXPECT_NE(e.find("cudaErrorInvalidConfiguration"), std::string::npos) << e;
  EXPECT_NE(e.find("block (2048,1,1) of 2048 threads exceeds sm_90's limits"), std::string::npos) << e;
  // A refused launch is not a fault: the context stays usable.
  EXPECT_EQ(emu::sticky_error(), 0);
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(off_by_one, 1, 64, 0, nullptr, out.p, 10); }), "");
  const std::string grid = launch_error([&] { WB_LAUNCH(off_by_one, dim3(1, 65536), 32, 0, nullptr, out.p, 0); });
  EXPECT_NE(grid.find("cudaErrorInvalidConfiguration"), std::string::npos) << grid;
}

TEST_F(EmuChecks, SharedWriteWriteRaceDependsOnTheThreadOrder) {
  DeviceFloats out(1);
  WB_LAUNCH(shared_write_race, 1, kThreads, 0, nullptr, out.p);
  EXPECT_EQ(out.p[0], float(kThreads - 1)) << "forward order: the last thread writes last";
  emu::set_schedule({true, 12345});
  WB_LAUNCH(shared_write_race, 1, kThreads, 0, nullptr, out.p);
  EXPECT_NE(out.p[0], float(kThreads - 1)) << "a shuffled order changes the winner: the race shows";
}

TEST_F(EmuChecks, SharedOverflowIsAMemcheckFault) {
  DeviceFloats out(kThreads);
  const std::string e = launch_error([&] { WB_LAUNCH(shared_overflow, 1, kThreads, 0, nullptr, out.p); });
  if (emu::reports_accesses()) {
    EXPECT_NE(e.find("memcheck: kernel shared_overflow, block (0,0,0), thread (" + std::to_string(kThreads - 1) +
                     ",0,0): a write of 4 bytes at "),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("0 bytes past the end of shared array 's'"), std::string::npos) << e;
    EXPECT_NE(e.find(", in "), std::string::npos) << e;
    EXPECT_NE(e.find("tests/emu/controls.h:80"), std::string::npos) << e;
  } else {
    EXPECT_NE(e.find("memcheck: kernel shared_overflow, block (0,0,0): a write past the end of shared array 's'"),
              std::string::npos)
        << e;
  }
}

TEST_F(EmuChecks, TrapIsAStickyLaunchFailure) {
  DeviceFloats out(32);
  const std::string e = launch_error([&] { WB_LAUNCH(traps, 1, 32, 0, nullptr, out.p); });
  EXPECT_NE(e.find("cudaErrorLaunchFailure"), std::string::npos) << e;
  EXPECT_NE(e.find("trap: kernel traps, block (0,0,0), thread (3,0,0): __trap()"), std::string::npos) << e;
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
}

TEST_F(EmuChecks, StaticSharedMemoryOver48KiBIsRefused) {
  DeviceFloats out(32);
  const std::string e = launch_error([&] { WB_LAUNCH(big_static_shared, 1, 32, 0, nullptr, out.p); });
  EXPECT_NE(e.find("more than the 48 KiB"), std::string::npos) << e;
}

TEST_F(EmuChecks, DynamicSharedMemoryNeedsItsOptIn) {
  const int n = 16 * 1024;  // 64 KiB
  DeviceFloats in(n, 2.0f), out(n);
  const std::string e =
      launch_error([&] { WB_LAUNCH(dynamic_shared_copy, 1, 256, n * sizeof(float), nullptr, out.p, in.p, n); });
  EXPECT_NE(e.find("cudaErrorInvalidValue"), std::string::npos) << e;
  EXPECT_NE(e.find("opts in with cudaFuncSetAttribute"), std::string::npos) << e;
  ASSERT_EQ(cudaFuncSetAttribute(dynamic_shared_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, n * 4), cudaSuccess);
  WB_LAUNCH(dynamic_shared_copy, 1, 256, n * sizeof(float), nullptr, out.p, in.p, n);
  EXPECT_EQ(out.p[0], 2.0f);
  EXPECT_EQ(cudaFuncSetAttribute(dynamic_shared_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024),
            cudaErrorInvalidValue)
      << "more than sm_90's 227 KiB";
}

TEST_F(EmuChecks, AtomicsAreExactAcrossParallelBlocks) {
  DeviceFloats out(1);
  WB_LAUNCH(global_atomic_add, 1000, 32, 0, nullptr, out.p);
  EXPECT_EQ(out.p[0], 1000.0f);
}

// racecheck across blocks: in the interleaving pass (wb check's second run) a plain
// write by a block to bytes that another block of the launch wrote with a plain write
// is a race, with or without a __syncthreads before it (a barrier orders its own
// block's threads only); with atomicAdd, or with the blocks' writes in separate
// launches, there is none.
TEST_F(EmuChecks, PlainAddsToOneWordFromTwoBlocksAreARaceEvenAfterABarrier) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "this build does not report accesses (its racecheck is ThreadSanitizer's)";
  emu::Schedule interleaved;
  interleaved.interleave = true;
  interleaved.shuffled = true;
  interleaved.seed = 3;
  for (const bool barrier : {false, true}) {
    emu::reset();
    emu::set_schedule(interleaved);
    DeviceFloats out(1);
    const std::string e = launch_error([&] {
      if (barrier) {
        WB_LAUNCH(global_write_race_after_barrier, 2, 32, 0, nullptr, out.p);
      } else {
        WB_LAUNCH(global_write_race, 2, 32, 0, nullptr, out.p);
      }
    });
    SCOPED_TRACE(barrier ? "after a barrier" : "no barrier");
    EXPECT_NE(e.find("cudaErrorLaunchFailure"), std::string::npos) << e;
    EXPECT_NE(e.find("racecheck: kernel global_write_race"), std::string::npos) << e;
    EXPECT_NE(e.find("a plain write of 4 bytes to "), std::string::npos) << e;
    EXPECT_NE(e.find("(byte 0 of a device buffer of 4 bytes)"), std::string::npos) << e;
    EXPECT_NE(e.find("'s plain write of the same byte, in emu_controls::global_write_race"), std::string::npos) << e;
  }
  emu::reset();
}

TEST_F(EmuChecks, AtomicAddsAndSeparateLaunchesAreNoRaceAcrossBlocks) {
  emu::Schedule interleaved;
  interleaved.interleave = true;
  interleaved.shuffled = true;
  interleaved.seed = 3;
  emu::set_schedule(interleaved);
  DeviceFloats out(1);
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(global_atomic_add_after_barrier, 2, 32, 0, nullptr, out.p); }), "");
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(global_atomic_add, 2, 32, 0, nullptr, out.p); }), "");
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(global_write_by_block, 2, 32, 0, nullptr, out.p, 0); }), "");
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(global_write_by_block, 2, 32, 0, nullptr, out.p, 1); }), "");
  EXPECT_EQ(out.p[0], 6.0f);
}

// racecheck across blocks, plain against atomic: a plain store by one block to a word
// that another block of the launch adds to atomically is a race in either order (the
// plain store first: the atomic faults; the atomics first: the store does), naming both
// sites; atomics against atomics are none (above).
TEST_F(EmuChecks, APlainStoreWhereOtherBlocksAddAtomicallyIsARaceInEitherOrder) {
  if (!emu::reports_accesses())
    GTEST_SKIP() << "this build does not report accesses (its racecheck is ThreadSanitizer's)";
  emu::Schedule interleaved;
  interleaved.interleave = true;
  interleaved.blocks = emu::Schedule::Blocks::forward;  // one at a time: the order is known
  for (const int plain_block : {0, 3}) {
    SCOPED_TRACE("the plain store by block " + std::to_string(plain_block));
    emu::reset();
    emu::set_schedule(interleaved);
    DeviceFloats out(1);
    const std::string e =
        launch_error([&] { WB_LAUNCH(plain_store_where_others_add, 4, 32, 0, nullptr, out.p, plain_block); });
    EXPECT_NE(e.find("cudaErrorLaunchFailure"), std::string::npos) << e;
    EXPECT_NE(e.find("racecheck: kernel plain_store_where_others_add"), std::string::npos) << e;
    if (plain_block == 0) {
      EXPECT_NE(e.find("block (1,0,0), thread (0,0,0): an atomic update of 4 bytes to "), std::string::npos) << e;
      EXPECT_NE(e.find("races with block (0,0,0)'s plain write of the same byte"), std::string::npos) << e;
    } else {
      EXPECT_NE(e.find("block (3,0,0), thread (0,0,0): a plain write of 4 bytes to "), std::string::npos) << e;
      EXPECT_NE(e.find("races with block (2,0,0)'s atomic update of the same byte"), std::string::npos) << e;
    }
    EXPECT_NE(e.find("(byte 0 of a device buffer of 4 bytes)"), std::string::npos) << e;
    EXPECT_NE(e.find("unless the blocks are ordered"), std::string::npos) << e;
  }
  emu::reset();
}

// The last-block pattern stays legal: the block that draws the last ticket after every
// block's __threadfence is ordered after their atomics, and writes plainly what they
// added (its plain reset of the ticket is ordered by the ticket itself). Without the
// fence, the same plain writes race with the adds. Forward, in parallel and in the
// seeded orders.
TEST_F(EmuChecks, TheLastBlockPatternIsLegalAndWithoutItsFenceARace) {
  if (!emu::reports_accesses())
    GTEST_SKIP() << "this build does not report accesses (its racecheck is ThreadSanitizer's)";
  for (const auto blocks :
       {emu::Schedule::Blocks::forward, emu::Schedule::Blocks::parallel, emu::Schedule::Blocks::shuffled}) {
    for (const int fence : {1, 0}) {
      SCOPED_TRACE("blocks " + std::to_string(int(blocks)) + (fence ? ", fenced" : ", no fence"));
      emu::reset();
      emu::Schedule interleaved;
      interleaved.interleave = true;
      interleaved.shuffled = true;
      interleaved.seed = 5;
      interleaved.blocks = blocks;
      emu::set_schedule(interleaved);
      DeviceFloats sums(2, 0.0f);
      auto* ticket = static_cast<unsigned*>(emu::device_malloc(sizeof(unsigned)));
      *ticket = 0;
      const std::string e =
          launch_error([&] { WB_LAUNCH(last_block_combines, 6, 64, 0, nullptr, sums.p, ticket, fence); });
      if (fence) {
        EXPECT_EQ(e, "");
        EXPECT_EQ(sums.p[0], 384.0f);
        EXPECT_EQ(sums.p[1], 384.0f);
        EXPECT_EQ(*ticket, 0u);
      } else {
        EXPECT_NE(e.find("racecheck: kernel last_block_combines"), std::string::npos) << e;
        EXPECT_NE(e.find("'s atomic update of the same byte"), std::string::npos) << e;
      }
      emu::device_free(ticket);
    }
  }
  emu::reset();
}

// Blocks::shuffled (the warps-alone run of wb check) starts a grid's blocks reversed or
// shuffled with block 0 last, drawn per launch, in parallel where the build can: a
// kernel whose block 0 assumes it starts first loses adds, where the blocks in index
// order one at a time give the sum it expects.
TEST_F(EmuChecks, TheShuffledBlockOrderStartsBlock0Last) {
  constexpr unsigned kBlocks = 64;  // more than the workers, so some finish before block 0
  auto* words = static_cast<unsigned*>(emu::device_malloc((2 + kBlocks) * sizeof(unsigned)));
  unsigned* out = words;
  unsigned* started = words + 1;
  unsigned* place = words + 2;
  auto run = [&](emu::Schedule::Blocks blocks, uint64_t seed) {
    emu::Schedule s;
    s.blocks = blocks;
    s.seed = seed;
    emu::set_schedule(s);
    *out = 0;
    *started = 0;
    EXPECT_EQ(launch_error([&] { WB_LAUNCH(first_block_sets, kBlocks, 32, 0, nullptr, out, started, place); }), "");
  };
  run(emu::Schedule::Blocks::forward, 1);
  EXPECT_EQ(*out, 100u + kBlocks - 1);
  EXPECT_EQ(place[0], 0u);
  bool reversed = false, shuffled = false;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    run(emu::Schedule::Blocks::shuffled, seed);
    EXPECT_LT(*out, 100u + kBlocks - 1) << "the adds made before block 0 started are lost";
    EXPECT_GE(*out, 100u);
    EXPECT_GT(place[0], 0u) << "block 0 never starts first";
    if (!emu::parallel_blocks()) {
      EXPECT_EQ(place[0], kBlocks - 1) << "one at a time, block 0 is last";
      bool down = true;
      for (unsigned b = 1; b < kBlocks; ++b) down &= place[b] == kBlocks - 1 - b;
      (down ? reversed : shuffled) = true;
    }
  }
  if (!emu::parallel_blocks()) {
    EXPECT_TRUE(reversed) << "some seed reverses the order";
    EXPECT_TRUE(shuffled) << "some seed shuffles it";
  }
  emu::device_free(words);
}

// ---------------------------------------------------------------------------------
// Correct CUDA passes (positive controls of the false faults)

// The schedules a check runs: forward, shuffled, the interleaving pass, and warps
// alone from one barrier to the next.
std::vector<emu::Schedule> schedules() {
  emu::Schedule forward, shuffled, interleaved, alone;
  shuffled.shuffled = true;
  shuffled.seed = 7;
  interleaved = shuffled;
  interleaved.interleave = true;
  interleaved.blocks = emu::Schedule::Blocks::shuffled;
  alone = shuffled;
  alone.warps_alone = true;
  return {forward, shuffled, interleaved, alone};
}

// The false fault of a site-only matching: a half-warp finishing its own shuffle
// while the other half already waits at the full-mask shuffle after it. Both halves
// lagging in turn (the pattern and its mirror), under every schedule and a few seeds.
TEST_F(EmuChecks, AHalfWarpFinishesItsShuffleWhileTheOtherWaitsAtTheFullMaskOne) {
  DeviceFloats in(64), out(64);
  for (int i = 0; i < 64; ++i) in.p[i] = float(i * i % 37);
  std::vector<emu::Schedule> all = schedules();
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    emu::Schedule s = all[3];
    s.seed = seed;
    all.push_back(s);
  }
  for (int lagging = 0; lagging < 2; ++lagging)
    for (const emu::Schedule& schedule : all) {
      emu::set_schedule(schedule);
      for (int i = 0; i < 64; ++i) out.p[i] = -1.0f;
      const std::string e = launch_error([&] {
        if (lagging == 0)
          WB_LAUNCH(halves_then_whole_warp<0>, 1, 64, 0, nullptr, out.p, in.p);
        else
          WB_LAUNCH(halves_then_whole_warp<1>, 1, 64, 0, nullptr, out.p, in.p);
      });
      ASSERT_EQ(e, "") << "lagging half " << lagging << ", seed " << schedule.seed;
      for (int i = 0; i < 64; ++i)
        EXPECT_EQ(out.p[i], in.p[i] + in.p[i ^ 1] + in.p[i ^ 16] + in.p[i ^ 17]) << i << ", lagging " << lagging;
    }
}

// The halves of a warp at two different full-mask shuffles wait for each other: a
// deadlock, named with both calls and the lanes at each.
TEST_F(EmuChecks, HalvesAtTwoFullMaskShufflesAreADeadlockNamingBoth) {
  DeviceFloats out(32);
  for (const emu::Schedule& schedule : schedules()) {
    emu::reset();
    emu::set_schedule(schedule);
    const std::string e = launch_error([&] { WB_LAUNCH(whole_warp_shuffles_apart, 1, 32, 0, nullptr, out.p); });
    EXPECT_NE(e.find("synccheck: kernel whole_warp_shuffles_apart, block (0,0,0)"), std::string::npos) << e;
    EXPECT_NE(e.find("wait at the collective at tests/emu/controls.h:"), std::string::npos) << e;
    EXPECT_NE(e.find("(mask 0xffffffff) for lanes "), std::string::npos) << e;
    EXPECT_NE(e.find(" waits at another collective tests/emu/controls.h:"), std::string::npos) << e;
    EXPECT_NE(e.find("(mask 0xffffffff, with lanes "), std::string::npos) << e;
  }
}

TEST_F(EmuChecks, HalfWarpsWithDisjointMasksShuffleAtOneCallIndependently) {
  DeviceFloats in(64), out(64);
  for (int i = 0; i < 64; ++i) in.p[i] = float(i);
  for (const emu::Schedule& schedule : schedules()) {
    emu::set_schedule(schedule);
    EXPECT_EQ(launch_error([&] { WB_LAUNCH(half_warp_sums, 1, 64, 0, nullptr, out.p, in.p); }), "");
    for (int i = 0; i < 64; ++i) {
      const int first = i / 16 * 16;  // 16 consecutive values first..first+15
      EXPECT_EQ(out.p[i], float(16 * first + 120)) << i;
    }
  }
}

TEST_F(EmuChecks, ActiveMaskInABranchIsTheLanesThatReachItTogether) {
  const int n = 128;
  DeviceFloats in(n), out(n, -1.0f);
  int* count = static_cast<int*>(emu::device_malloc(sizeof(int)));
  std::mt19937 rng(3);
  std::vector<float> positive;
  for (int i = 0; i < n; ++i) {
    in.p[i] = float(int(rng() % 200) - 100) + 0.5f;
    if (in.p[i] > 0.0f) positive.push_back(in.p[i]);
  }
  for (const emu::Schedule& schedule : schedules()) {
    emu::set_schedule(schedule);
    *count = 0;
    EXPECT_EQ(launch_error([&] { WB_LAUNCH(append_positive, 2, 64, 0, nullptr, out.p, count, in.p); }), "");
    ASSERT_EQ(*count, int(positive.size()));
    std::vector<float> appended(out.p, out.p + *count), expected = positive;
    std::sort(appended.begin(), appended.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(appended, expected);
  }
  emu::device_free(count);
}

TEST_F(EmuChecks, AWarpSpinningOnAFlagThatAnotherWarpSetsIsLetThrough) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "this build does not report accesses: a spinning thread never yields";
  DeviceFloats out(1);
  for (const bool atomics : {false, true})
    for (const emu::Schedule& schedule : schedules()) {
      emu::set_schedule(schedule);
      out.p[0] = 0.0f;
      EXPECT_EQ(launch_error([&] { WB_LAUNCH(flag_handoff, 1, 64, 0, nullptr, out.p, atomics); }), "");
      EXPECT_EQ(out.p[0], 42.0f) << (atomics ? "atomics" : "volatile");
    }
}

TEST_F(EmuChecks, CooperativeGroupsReduceWithinTiles) {
  DeviceFloats in(96), out(2 * 96 / 16);
  for (int i = 0; i < 96; ++i) in.p[i] = float((i * 37) % 101);
  for (const emu::Schedule& schedule : schedules()) {
    emu::set_schedule(schedule);
    EXPECT_EQ(launch_error([&] { WB_LAUNCH(tile_reductions<16>, 1, 96, 0, nullptr, out.p, in.p); }), "");
    for (int t = 0; t < 96 / 16; ++t) {
      float sum = 0.0f, largest = 0.0f;
      for (int i = 16 * t; i < 16 * t + 16; ++i) sum += in.p[i], largest = std::max(largest, in.p[i]);
      EXPECT_EQ(out.p[2 * t], sum) << t;
      EXPECT_EQ(out.p[2 * t + 1], largest) << t;
    }
    EXPECT_EQ(launch_error([&] { WB_LAUNCH(tile_reductions<32>, 1, 96, 0, nullptr, out.p, in.p); }), "");
    float last = 0.0f;
    for (int i = 64; i < 96; ++i) last += in.p[i];
    EXPECT_EQ(out.p[4], last);
  }
}

TEST_F(EmuChecks, WarpMatchGroupsLanesByValue) {
  unsigned* out = static_cast<unsigned*>(emu::device_malloc(128 * sizeof(unsigned)));
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(match_lanes, 1, 32, 0, nullptr, out); }), "");
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned same = 0;
    for (unsigned j = 0; j < 32; ++j)
      if (j % 3 == lane % 3) same |= 1u << j;
    EXPECT_EQ(out[lane], same) << lane;
    EXPECT_EQ(out[32 + lane], 0xffffffffu);
    EXPECT_EQ(out[64 + lane], 0u);
    EXPECT_EQ(out[96 + lane], 1u) << "all equal for 7, not for the lane numbers";
  }
  emu::device_free(out);
}

// ---------------------------------------------------------------------------------
// Bugs a GPU exposes are caught by the plain build (negative controls)

TEST_F(EmuChecks, OutOfBoundsReadReadsNaN) {
  DeviceFloats in(64, 1.0f), out(64);
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(global_overread, 1, 64, 0, nullptr, out.p, in.p, 64); }), "");
  for (int i = 0; i + 1 < 64; ++i) EXPECT_EQ(out.p[i], 1.0f);
  EXPECT_TRUE(std::isnan(out.p[63])) << "the canary past the input reads as NaN: " << out.p[63];
}

// Where the plain build reports reads (the interleaving pass of wb check), a read in a
// canary faults, naming the thread, the buffer or shared array and the kernel's line:
// also a read whose value is discarded, which the canary's NaN cannot show.
TEST_F(EmuChecks, ReadsPastABufferOrASharedArrayFaultInTheInterleavingPass) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "only the plain build reports reads";
  DeviceFloats in(64, 1.0f), out(64);
  WB_LAUNCH(peeks_past_end, 1, 64, 0, nullptr, out.p, in.p, 64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out.p[i], 1.0f) << "forward order: the result is right";
  emu::Schedule interleaved;
  interleaved.shuffled = interleaved.interleave = true;
  interleaved.seed = 5;
  emu::set_schedule(interleaved);
  std::string e = launch_error([&] { WB_LAUNCH(peeks_past_end, 1, 64, 0, nullptr, out.p, in.p, 64); });
  EXPECT_NE(e.find("cudaErrorIllegalAddress"), std::string::npos) << e;
  EXPECT_NE(e.find("memcheck: kernel peeks_past_end, block (0,0,0), thread (63,0,0): a read of 4 bytes at 0x"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(", 0 bytes past the end of a device buffer of 256 bytes, in emu_controls::peeks_past_end"),
            std::string::npos)
      << e;
  emu::reset();
  emu::set_schedule(interleaved);
  e = launch_error([&] { WB_LAUNCH(shared_overread, 1, kThreads, 0, nullptr, out.p); });
  EXPECT_NE(e.find("thread (63,0,0): a read of 4 bytes at 0x"), std::string::npos) << e;
  EXPECT_NE(e.find(", 0 bytes past the end of shared array 's', declared at tests/emu/controls.h:"), std::string::npos)
      << e;
  // Reads inside the buffers pass.
  emu::reset();
  emu::set_schedule(interleaved);
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(peeks_past_end, 1, 64, 0, nullptr, out.p, in.p, 63); }), "");
}

TEST_F(EmuChecks, WriteFarPastABufferIsAnIllegalAddressFault) {
  if (emu::flavour() != std::string("plain")) GTEST_SKIP() << "guard pages are the plain build's";
  DeviceFloats out(100), neighbour(100, 5.0f);
  const std::string e = launch_error([&] { WB_LAUNCH(far_write, 1, 32, 0, nullptr, out.p, 100, 1000); });
  EXPECT_NE(e.find("cudaErrorIllegalAddress"), std::string::npos) << e;
  EXPECT_NE(e.find("memcheck: kernel far_write, block (0,0,0), thread (0,0,0): an access at 0x"), std::string::npos)
      << e;
  EXPECT_NE(e.find("4000 bytes past the end of a device buffer of 400 bytes (in the guard region around it)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(", in emu_controls::far_write"), std::string::npos) << "names the kernel's code: " << e;
  EXPECT_EQ(emu::sticky_error(), cudaErrorIllegalAddress) << "sticky, as on a GPU";
  for (int i = 0; i < 100; ++i) EXPECT_EQ(neighbour.p[i], 5.0f) << "the neighbouring buffer is untouched";
}

TEST_F(EmuChecks, WriteJustPastTheCanaryIsCaughtToo) {
  DeviceFloats out(100);
  // 64 floats past the end: in the canary (256 bytes or more), caught after the launch.
  const std::string e = launch_error([&] { WB_LAUNCH(far_write, 1, 32, 0, nullptr, out.p, 100, 63); });
  EXPECT_NE(e.find("cudaErrorIllegalAddress"), std::string::npos) << e;
  EXPECT_NE(e.find("past the end of a device buffer of 400 bytes"), std::string::npos) << e;
}

TEST_F(EmuChecks, SharedReadModifyWriteRaceLosesUpdatesInTheInterleavingPass) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "this build does not report accesses";
  DeviceFloats out(1);
  WB_LAUNCH(shared_count, 1, kThreads, 0, nullptr, out.p);
  EXPECT_EQ(out.p[0], float(kThreads)) << "without interleaving each += runs whole";
  emu::Schedule interleaved;
  interleaved.interleave = true;
  emu::set_schedule(interleaved);
  WB_LAUNCH(shared_count, 1, kThreads, 0, nullptr, out.p);
  EXPECT_LT(out.p[0], float(kThreads)) << "threads switching between the read and the write lose updates";
  interleaved.shuffled = true;
  interleaved.seed = 5;
  interleaved.period = 4;  // a switch at one access in four
  emu::set_schedule(interleaved);
  WB_LAUNCH(shared_count, 1, kThreads, 0, nullptr, out.p);
  EXPECT_LT(out.p[0], float(kThreads));
}

TEST_F(EmuChecks, BlockWaitingForALaterBlockIsAWatchdogFault) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "this build does not report accesses: a spinning thread never yields";
  DeviceFloats out(1);
  int* flag = static_cast<int*>(emu::device_malloc(sizeof(int)));
  *flag = 0;
  emu::Schedule forward;
  forward.blocks = emu::Schedule::Blocks::forward;
  emu::set_schedule(forward);
  const std::string e = launch_error([&] { WB_LAUNCH(wait_for_last_block, 4, 32, 0, nullptr, out.p, flag); });
  EXPECT_NE(e.find("cudaErrorLaunchFailure"), std::string::npos) << e;
  EXPECT_NE(e.find("watchdog: kernel wait_for_last_block, block (0,0,0): no thread can make progress"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("thread (0,0,0) spins reading 0x"), std::string::npos) << e;
  EXPECT_NE(e.find("(byte 0 of a device buffer of 4 bytes)"), std::string::npos) << e;
  EXPECT_NE(e.find("in emu_controls::wait_for_last_block at tests/emu/controls.h:"), std::string::npos)
      << "names the line of the spin (addr2line on the build's line tables): " << e;
  EXPECT_NE(e.find("31 have exited"), std::string::npos) << e;
  emu::device_free(flag);
}

TEST_F(EmuChecks, BarrierAfterSomeThreadsExitedIsANoteOrAStrictFault) {
  DeviceFloats in(kThreads, 2.0f), out(kThreads);
  emu::take_notes();
  EXPECT_EQ(launch_error([&] { WB_LAUNCH(exit_before_barrier, 1, kThreads, 0, nullptr, out.p, in.p, 40); }), "");
  EXPECT_EQ(out.p[0], 2.0f) << "runs as a GPU since Volta runs it";
  const std::vector<std::string> notes = emu::take_notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("synccheck note: __syncthreads at tests/emu/controls.h:"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("in kernel exit_before_barrier is reached while threads of the block have exited "
                          "(block (0,0,0): 24 of 64 exited, the first thread (40,0,0))"),
            std::string::npos)
      << notes[0];
  EXPECT_TRUE(emu::take_notes().empty());
  // All threads at the barrier: no note.
  WB_LAUNCH(exit_before_barrier, 1, kThreads, 0, nullptr, out.p, in.p, kThreads);
  EXPECT_TRUE(emu::take_notes().empty());
  emu::set_strict_sync(true);
  const std::string e = launch_error([&] { WB_LAUNCH(exit_before_barrier, 1, kThreads, 0, nullptr, out.p, in.p, 40); });
  emu::set_strict_sync(false);
  EXPECT_NE(e.find("cudaErrorLaunchFailure"), std::string::npos) << e;
  EXPECT_NE(e.find("synccheck: __syncthreads at tests/emu/controls.h:"), std::string::npos) << e;
  EXPECT_NE(e.find("(--strict-sync)"), std::string::npos) << e;
}

TEST_F(EmuChecks, TargetsHaveTheirOwnLimits) {
  emu::set_target("sm_86");
  EXPECT_EQ(emu::target().max_shared_per_block_optin, 99u * 1024);
  EXPECT_EQ(cudaFuncSetAttribute(dynamic_shared_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, 150 * 1024),
            cudaErrorInvalidValue);
  emu::set_target("sm_90");
  EXPECT_THROW(emu::set_target("sm_70"), std::invalid_argument);
}

}  // namespace
}  // namespace wb::emu_controls
