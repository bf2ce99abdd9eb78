// The emulator's sanitized checks on planted bugs: run one scenario per process, in a
// build with ThreadSanitizer (racecheck) or AddressSanitizer (memcheck of reads too);
// ci/emu_sanitized.sh looks for the sanitizer's report in what each one prints.
//
//   sanitized_controls SCENARIO
//     shared_race      threads write one shared word with no barrier    (TSan: race)
//     missing_barrier  thread 0 reads words the others wrote, no barrier (TSan: race)
//     global_race      two blocks add to one global word, no atomics     (TSan: race)
//     global_race_after_barrier  the same, each block passing a __syncthreads first:
//                      a barrier orders its own block's threads only       (TSan: race)
//     mma_missing_barrier  the mma.sync pipeline of tests/planted/tensor_core_faults.cuh
//                      without the __syncthreads between a stage's cp.async wait and
//                      its ldmatrix reads: one warp's landing, the other's read  (TSan: race)
//     mma_refill_before_barrier  the same pipeline refilling a stage before the
//                      barrier that ends the other warp's reads of it (four steps):
//                      one warp's read, the other's cp.async landing        (TSan: race)
//     clean            the same four done right, and the correct CUDA of the false
//                      faults (half warps with their own masks, __activemask in a
//                      branch)                                              (no report)
//     synccheck_barrier  two halves of a block at different __syncthreads (synccheck)
//     synccheck_exited   a shuffle naming lanes that have exited            (synccheck)
//     shared_overread  a read one past a shared array                    (ASan: overflow)
//     global_overread  a read one past a device buffer                   (ASan: overflow)
// A launch that fails prints the error ("launch failed: ...") and exits 1: the
// synccheck scenarios must end so, with no sanitizer report on the way (the fault's
// message passes from the faulting thread to the scheduler through a sync object).
#include "tests/emu/controls.h"  // first: CUDA source compiled for the emulator

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "emu/emu.h"
#include "tests/planted/tensor_core_faults.cuh"

using namespace wb;
using namespace wb::emu_controls;

namespace {

float* device_floats(int n, float fill) {
  auto* p = static_cast<float*>(emu::device_malloc(std::size_t(n) * sizeof(float)));
  for (int i = 0; i < n; ++i) p[i] = fill;
  return p;
}

// The planted mma.sync matmul on an n x n x n problem of ones (n / 16 blocks' worth of
// tiles in each direction, n / 16 pipeline steps).
template <planted_tc::Bug kBug, int n = 32>
void mma_pipeline() {
  auto* m = static_cast<__nv_bfloat16*>(emu::device_malloc(n * n * sizeof(__nv_bfloat16)));
  auto* out = static_cast<__nv_bfloat16*>(emu::device_malloc(n * n * sizeof(__nv_bfloat16)));
  for (int i = 0; i < n * n; ++i) m[i] = __float2bfloat16(1.0f);
  const __nv_bfloat16* no_bias = nullptr;
  WB_LAUNCH(planted_tc::mma_matmul_bf16<kBug>, planted_tc::mma_matmul_grid(n, n), planted_tc::kThreads, 0, nullptr,
            out, m, m, no_bias, n, n, n);
  for (int i = 0; i < n * n; ++i)
    if (float(out[i]) != float(n)) throw std::runtime_error("the mma pipeline's out[" + std::to_string(i) + "] is wrong");
  emu::device_free(m);
  emu::device_free(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sanitized_controls SCENARIO\n");
    return 2;
  }
  const std::string s = argv[1];
  float* in = device_floats(kThreads, 1.0f);
  float* out = device_floats(kThreads, 0.0f);
  std::printf("flavour %s, scenario %s\n", emu::flavour(), s.c_str());
  try {
  if (s == "shared_race") {
    WB_LAUNCH(shared_write_race, 1, kThreads, 0, nullptr, out);
  } else if (s == "missing_barrier") {
    WB_LAUNCH(block_sum, 1, kThreads, 0, nullptr, out, in, false);
  } else if (s == "global_race") {
    WB_LAUNCH(global_write_race, 2, 32, 0, nullptr, out);
  } else if (s == "global_race_after_barrier") {
    WB_LAUNCH(global_write_race_after_barrier, 2, 32, 0, nullptr, out);
  } else if (s == "mma_missing_barrier") {
    mma_pipeline<planted_tc::Bug::missing_barrier>();
  } else if (s == "mma_refill_before_barrier") {
    mma_pipeline<planted_tc::Bug::refill_before_barrier, 64>();
  } else if (s == "clean") {
    mma_pipeline<planted_tc::Bug::none>();
    WB_LAUNCH(block_sum, 1, kThreads, 0, nullptr, out, in, true);
    WB_LAUNCH(global_atomic_add, 2, 32, 0, nullptr, out);
    WB_LAUNCH(global_atomic_add_after_barrier, 2, 32, 0, nullptr, out);
    WB_LAUNCH(global_write_by_block, 2, 32, 0, nullptr, out, 0);  // one block each launch:
    WB_LAUNCH(global_write_by_block, 2, 32, 0, nullptr, out, 1);  // ordered by the launch's end
    WB_LAUNCH(uninitialised_shared, 1, kThreads - 1, 0, nullptr, out);
    WB_LAUNCH(half_warp_sums, 1, kThreads, 0, nullptr, out, in);
    int* count = static_cast<int*>(emu::device_malloc(sizeof(int)));
    *count = 0;
    WB_LAUNCH(append_positive, 1, kThreads, 0, nullptr, out, count, in);
    emu::device_free(count);
  } else if (s == "synccheck_barrier") {
    WB_LAUNCH(divergent_barrier, 1, 32, 0, nullptr, out);
  } else if (s == "synccheck_exited") {
    WB_LAUNCH(shuffle_with_exited_lanes, 1, 32, 0, nullptr, out);
  } else if (s == "shared_overread") {
    WB_LAUNCH(shared_overread, 1, kThreads, 0, nullptr, out);
  } else if (s == "global_overread") {
    WB_LAUNCH(global_overread, 1, kThreads, 0, nullptr, out, in, kThreads);
  } else {
    std::fprintf(stderr, "unknown scenario %s\n", s.c_str());
    return 2;
  }
  } catch (const std::exception& e) {
    std::printf("launch failed: %s\n", e.what());
    return 1;
  }
  std::printf("finished, out[0] = %g\n", double(out[0]));
  emu::device_free(in);
  emu::device_free(out);
  return 0;
}
