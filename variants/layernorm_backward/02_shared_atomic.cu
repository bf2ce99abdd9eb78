// layernorm_backward, CUDA variant 2: warp per row, dweight/dbias gathered in shared
// memory, then added to global memory with atomics.
//
// Idea: a grid sized to what the GPU keeps resident strides over the rows, one warp
// per row. The lanes stride over the row's channels (coalesced); the two row means
// are warp-shuffle reductions, and dinp is updated in a second pass over the row
// (which mostly hits L1). Each block accumulates its rows' contributions to dweight
// and dbias in shared memory (2C floats, shared-memory atomicAdd), and at the end
// adds them to global memory with one atomicAdd per channel and block.
// Why it should beat variant 1: every access coalesces, B*T*C/32 lanes work on
// dinp instead of B*T threads, and dweight/dbias come out of the same pass over the
// data instead of a second kernel that re-reads inp and dout with C threads.
// Limits: float atomics (shared and global) make the results differ in the last bits
// from run to run: not deterministic. C <= 6144 (2C floats of shared memory within the
// default 48 KiB). 32-bit loads.
#include <cstddef>
#include <cstdint>
#include <string>

#include "contract/ops/layernorm_backward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

constexpr int kMaxC = 6144;  // 2 * kMaxC floats = 48 KiB of shared memory

__global__ void layernorm_backward_shared_atomic(float* dinp, float* dweight, float* dbias, const float* dout,
                                                 const float* inp, const float* weight, const float* mean,
                                                 const float* rstd, int rows, int C) {
  WB_DYNAMIC_SHARED(float, accumulators);  // [2][C]: dweight, then dbias
  float* block_dw = accumulators;
  float* block_db = accumulators + C;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    block_dw[c] = 0.0f;
    block_db[c] = 0.0f;
  }
  __syncthreads();

  const int lane = threadIdx.x % cuda::kWarpSize;
  const int warps = blockDim.x / cuda::kWarpSize;
  const int64_t stride = int64_t(gridDim.x) * warps;
  for (int64_t row = int64_t(blockIdx.x) * warps + threadIdx.x / cuda::kWarpSize; row < rows; row += stride) {
    const float* x = inp + row * C;
    const float* dy = dout + row * C;
    float* dx = dinp + row * C;
    const float m = mean[row], s = rstd[row];
    float g_sum = 0.0f, gn_sum = 0.0f;
    for (int c = lane; c < C; c += cuda::kWarpSize) {
      const float g = weight[c] * dy[c];
      g_sum += g;
      gn_sum += g * ((x[c] - m) * s);
    }
    const float g_mean = cuda::warp_sum(g_sum) / C;
    const float gn_mean = cuda::warp_sum(gn_sum) / C;
    for (int c = lane; c < C; c += cuda::kWarpSize) {
      const float n = (x[c] - m) * s;
      const float d = dy[c];
      dx[c] += (weight[c] * d - g_mean - n * gn_mean) * s;
      atomicAdd(block_dw + c, n * d);
      atomicAdd(block_db + c, d);
    }
  }
  __syncthreads();
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    atomicAdd(dweight + c, block_dw[c]);
    atomicAdd(dbias + c, block_db[c]);
  }
}

// Blocks the device keeps resident at once for this block size and shared memory.
int resident_blocks(int block, std::size_t shared_bytes) {
  int device = 0, sms = 0, per_sm = 0;
  WB_CHECK(cudaGetDevice(&device));
  WB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  WB_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layernorm_backward_shared_atomic, block, shared_bytes));
  return sms * (per_sm > 0 ? per_sm : 1);
}

void launch(const LayernormBackwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const std::size_t shared_bytes = 2 * std::size_t(a.C) * sizeof(float);
  const int64_t needed = cuda::grid_for(rows, block / cuda::kWarpSize);
  const int64_t resident = resident_blocks(block, shared_bytes);
  const unsigned grid = unsigned(needed < resident ? needed : resident);
  WB_LAUNCH(layernorm_backward_shared_atomic, grid, block, shared_bytes, cuda::stream(l), a.dinp, a.dweight, a.dbias,
            a.dout, a.inp, a.weight, a.mean, a.rstd, rows, a.C);
}

}  // namespace

Variant layernorm_backward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "warp per row; dweight/dbias summed per block in shared memory, then global atomics";
  v.params = {block_size_param()};
  v.deterministic = [](const ParamValues&) { return false; };  // float atomicAdd: the order of the adds varies
  v.requirements = {{"C <= " + std::to_string(kMaxC), [](const Shape& s) { return s.C <= kMaxC; }}};
  return v;
}

}  // namespace wb::variants
