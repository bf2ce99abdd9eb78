// Test-only CUDA variants of residual_forward with planted faults, never in wb's own
// registry: the wb_planted program (wb_planted.cpp) adds them to a copy of it. This
// file is compiled twice, like a variant: by nvcc (backend cuda, where nvcc is found)
// and by the host compiler through the emulator's shim (backend emu).
//   90 out_of_bounds  every thread writes its element, and thread 0 also writes
//                     outside `out`: one element past the end under the emulator
//                     (its memcheck canary), far out of the allocation on a GPU (an
//                     illegal address). The context is lost, on both.
//   91 naive_again    correct: the naive port, to be run (or not) after the fault.
#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/residual_forward.h"

namespace wb::variants {
namespace {

__global__ void planted_out_of_bounds(float* out, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = inp1[i] + inp2[i];
#if defined(WB_EMU)
  const int64_t outside = n;  // the emulator's canary right after the buffer
#else
  const int64_t outside = int64_t(1) << 38;  // a terabyte past it: no allocation there
#endif
  if (i == 0) out[outside] = 1.0f;
}

__global__ void planted_naive(float* out, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = inp1[i] + inp2[i];
}

void launch_out_of_bounds(const ResidualForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(planted_out_of_bounds, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), a.out, a.inp1, a.inp2, a.N);
}

void launch_naive(const ResidualForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(planted_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), a.out, a.inp1, a.inp2, a.N);
}

std::vector<Variant> planted() {
  Variant fault = Variant::of(&launch_out_of_bounds);
  fault.op = "residual_forward";
  fault.backend = Backend::cuda;
  fault.id = 90;
  fault.name = "planted_out_of_bounds";
  fault.summary = "test only: writes outside its output, which loses the device";
  fault.params = {block_size_param({128}, 128)};
  Variant naive = Variant::of(&launch_naive);
  naive.op = "residual_forward";
  naive.backend = Backend::cuda;
  naive.id = 91;
  naive.name = "planted_naive_again";
  naive.summary = "test only: the naive port, correct";
  naive.params = {block_size_param({128}, 128)};
  return {fault, naive};
}

}  // namespace
}  // namespace wb::variants

// One name per compilation, outside the namespaces the shim renames.
#if defined(WB_EMU)
std::vector<wb::Variant> planted_emu_variants() { return wb::variants::planted(); }
#else
std::vector<wb::Variant> planted_cuda_variants() { return wb::variants::planted(); }
#endif
