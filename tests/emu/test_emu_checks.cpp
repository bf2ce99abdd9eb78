// The emulator's checks on planted bugs (tests/emu/controls.h): each is caught with a
// message that names the check, the kernel and what is wrong; each correct twin
// passes. Compiled for the emulator (WB_EMU), like a variant.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/emu/emu.h"
#include "kernels/errors.h"
#include "tests/emu/controls.h"  // first: CUDA source compiled for the emulator

namespace wb::emu_controls {
namespace {

// Device memory of the emulated device, released at scope end.
struct DeviceFloats {
  explicit DeviceFloats(std::size_t count, float fill = 0.0f) {
    p = static_cast<float*>(emu::device_malloc(count * sizeof(float)));
    for (std::size_t i = 0; i < count; ++i) p[i] = fill;
  }
  ~DeviceFloats() { emu::device_free(p); }
  float* p;
};

class EmuChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    emu::reset();
    emu::set_schedule({});
  }
  void TearDown() override { emu::reset(); }
};

// The message of the BackendError a launch throws, or "" when it succeeds.
template <class F>
std::string launch_error(F&& f) {
  try {
    f();
  } catch (const BackendError& e) {
    return e.what();
  }
  return "";
}

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
  EXPECT_NE(e.find("memcheck: kernel off_by_one wrote past the end of a device buffer of 400 bytes"), std::string::npos)
      << e;
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
  EXPECT_NE(e.find("memcheck: kernel shared_overflow, block (0,0,0): a write past the end of shared array 's'"),
            std::string::npos)
      << e;
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
