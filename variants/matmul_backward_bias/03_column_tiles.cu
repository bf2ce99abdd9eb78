// matmul_backward_bias, CUDA variant 3: column tiles x row slices, two passes.
//
// Idea: the grid is (column tiles of 32) x (row slices of `rows` rows). A block of 32 x
// (block_size / 32) threads owns 32 neighbouring columns of one slice: thread (x, y)
// sums rows y, y + block_size / 32, ... of the slice in column x, so each warp reads
// whole 128-byte row segments (fully coalesced). The row lanes are then added in
// order through shared memory and the block stores one partial sum per column in the
// workspace (slices x OC floats). A second kernel, one thread per column, adds the
// slices' partials in slice order and adds the total to dbias. No atomics, a fixed
// order everywhere: deterministic.
// Why it should beat variant 2: every sector read is fully used (variants 1 and 2 use
// 4 bytes of each 32), and the row slices give ceil(OC / 32) * ceil(B*T / rows)
// blocks (3072 at llmc-dev with rows = 256) instead of a few thousand serial warps, so
// enough loads are in flight to approach the DRAM bandwidth.
// Limits: the partials make a second (small) pass and a workspace of
// ceil(B*T / rows) * OC floats; ceil(B*T / rows) must stay within 65535 (grid y).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "contract/ops/matmul_backward_bias.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

constexpr int kColumns = cuda::kWarpSize;  // columns per block
constexpr int kMaxThreads = 1024;
constexpr int64_t kMaxGridY = 65535;

int64_t slices_for(int64_t rows, int64_t rows_per_slice) { return (rows + rows_per_slice - 1) / rows_per_slice; }

// grid (ceil(OC / 32), slices), block (32, lanes).
// partial[slice * OC + col] = sum of dout[r, col] over the slice's rows.
__global__ void bias_column_tile_partials(float* partial, const float* dout, int rows, int OC, int rows_per_slice) {
  WB_SHARED(float, sums, [kMaxThreads]);  // sums[y * 32 + x]
  const int lanes = blockDim.y;
  const int col = blockIdx.x * kColumns + threadIdx.x;
  const int r_begin = blockIdx.y * rows_per_slice;
  const int r_end = min(rows, r_begin + rows_per_slice);
  float acc = 0.0f;
  if (col < OC) {
#pragma unroll 4
    for (int r = r_begin + threadIdx.y; r < r_end; r += lanes) acc += dout[std::size_t(r) * OC + col];
  }
  sums[threadIdx.y * kColumns + threadIdx.x] = acc;
  __syncthreads();  // every thread of the block reaches it: no early return above
  if (threadIdx.y == 0 && col < OC) {
    float s = 0.0f;
    for (int y = 0; y < lanes; ++y) s += sums[y * kColumns + threadIdx.x];
    partial[std::size_t(blockIdx.y) * OC + col] = s;
  }
}

// One thread per column: dbias[col] += partial[0, col] + partial[1, col] + ... in order.
__global__ void bias_add_slice_partials(float* dbias, const float* partial, int OC, int slices) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= OC) return;
  float s = 0.0f;
  for (int i = 0; i < slices; ++i) s += partial[std::size_t(i) * OC + col];
  dbias[col] += s;
}

void launch(const MatmulBackwardBiasArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const int rows_per_slice = l.get("rows");
  const int slices = int(slices_for(rows, rows_per_slice));
  float* partial = static_cast<float*>(l.workspace);
  cudaStream_t stream = cuda::stream(l);
  const dim3 grid(cuda::grid_for(a.OC, kColumns), slices);
  const dim3 threads(kColumns, block / kColumns);
  WB_LAUNCH(bias_column_tile_partials, grid, threads, 0, stream, partial, a.dout, rows, a.OC, rows_per_slice);
  WB_LAUNCH(bias_add_slice_partials, cuda::grid_for(a.OC, block), block, 0, stream, a.dbias, partial, a.OC, slices);
}

}  // namespace

Variant matmul_backward_bias_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary = "blocks of 32 columns x a slice of rows, coalesced; partials in the workspace, summed in a second pass";
  v.params = {block_size_param(), TuningParam{"rows", {64, 128, 256, 512, 1024}, 256}};
  v.launch_limit = [](const Shape& s, const ParamValues& p) -> std::optional<std::string> {
    if (slices_for(s.B * s.T, p.get("rows")) > kMaxGridY) return "ceil(B*T / rows) must be <= 65535 (grid y)";
    return std::nullopt;
  };
  v.workspace = [](const Shape& s, const ParamValues& p) {
    return std::size_t(slices_for(s.B * s.T, p.get("rows"))) * std::size_t(s.OC) * sizeof(float);
  };
  return v;
}

}  // namespace wb::variants
