// layernorm_backward, CUDA variant 3: deterministic -- per-block partial sums of
// dweight/dbias in the workspace, then a reduction kernel in a fixed order; float4.
//
// Idea: kernel 1 (variants/layernorm_backward/common.cuh) gives each warp up to
// rows_per_warp rows; a lane holds its float4 slices of a row's inp (normalised) and
// dout in registers, so inp and dout are read from memory once, dinp once and written
// once. The lanes also keep running dweight/dbias sums for their channels across
// their rows; each block adds its warps' sums together in warp order and writes the
// block's partial sums to the workspace: partials[0][G][C] for dweight,
// partials[1][G][C] for dbias (G blocks). Kernel 2 (blocks of 32 float4 columns x 16
// slices) sums the G partials of every channel -- slice s takes partials s, s + 16, ...,
// then the 16 slice sums are added in slice order -- and adds the totals to dweight and
// dbias with float4 read-modify-writes.
// Why it should beat variants 1 and 2: the least memory traffic the op allows (inp,
// dout read once; dinp read and written once) through 128-bit accesses, no
// shared-memory atomics, and no float atomics at all: bitwise the same result on every
// run. The price is kernel 2 and 2 * G * C floats of workspace (G * 6 KiB at C = 768);
// rows_per_warp sets G (fewer, longer-lived blocks mean fewer partials).
// Limits: C % 4 == 0 and C <= 1024 (a row in at most 8 float4 registers per lane and
// tensor). Registers grow with C (about 16 per float4 slot), which caps the resident
// warps for the largest C.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "contract/ops/layernorm_backward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/layernorm_backward/common.cuh"

namespace wb::variants {
namespace {

using layernorm_backward_detail::add4;
using layernorm_backward_detail::kMaxC;
using layernorm_backward_detail::row_blocks;

constexpr int kSlices = 16;  // kernel 2: blocks of 32 float4 columns x kSlices

// dweight[c] += sum_b partials[0][b][c], dbias[c] += sum_b partials[1][b][c], in a fixed
// order. blockDim.x == 32 * kSlices.
__global__ void __launch_bounds__(cuda::kWarpSize* kSlices)
    reduce_partials(float* dweight, float* dbias, const float* partials, int blocks, int C) {
  WB_SHARED(float4, slice_dw, [kSlices][cuda::kWarpSize]);
  WB_SHARED(float4, slice_db, [kSlices][cuda::kWarpSize]);
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int slice = threadIdx.x / cuda::kWarpSize;
  const int v = blockIdx.x * cuda::kWarpSize + lane;
  const bool active = v < C / 4;
  float4 dw = make_float4(0.0f, 0.0f, 0.0f, 0.0f), db = dw;
  if (active) {
    const float* dw_col = partials + 4 * v;
    const float* db_col = partials + int64_t(blocks) * C + 4 * v;
#pragma unroll 4
    for (int b = slice; b < blocks; b += kSlices) {
      add4(dw, cuda::load4(dw_col + int64_t(b) * C));
      add4(db, cuda::load4(db_col + int64_t(b) * C));
    }
  }
  slice_dw[slice][lane] = dw;
  slice_db[slice][lane] = db;
  __syncthreads();
  if (slice == 0 && active) {
    float4 tw = slice_dw[0][lane], tb = slice_db[0][lane];
    for (int s = 1; s < kSlices; ++s) {
      add4(tw, slice_dw[s][lane]);
      add4(tb, slice_db[s][lane]);
    }
    float4 w = cuda::load4(dweight + 4 * v), b = cuda::load4(dbias + 4 * v);
    add4(w, tw);
    add4(b, tb);
    cuda::store4(dweight + 4 * v, w);
    cuda::store4(dbias + 4 * v, b);
  }
}

std::size_t partials_bytes(int64_t rows, int64_t C, int block, int rows_per_warp) {
  return std::size_t(2 * row_blocks(rows, block, rows_per_warp) * C) * sizeof(float);
}

void launch(const LayernormBackwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const int rows_per_warp = l.get("rows_per_warp");
  if (l.workspace_bytes < partials_bytes(rows, a.C, block, rows_per_warp))
    throw std::logic_error("layernorm_backward cuda/3: workspace too small for the partial sums");
  cuda::require_aligned16("layernorm_backward cuda/3", {a.dweight, a.dbias});  // the reduction's float4 columns
  const int64_t blocks = row_blocks(rows, block, rows_per_warp);
  float* partials = static_cast<float*>(l.workspace);
  const cudaStream_t s = cuda::stream(l);
  layernorm_backward_detail::launch_rows<false>(a, partials, unsigned(blocks), block, rows_per_warp, s);
  const unsigned columns = cuda::grid_for(a.C / 4, cuda::kWarpSize);
  WB_LAUNCH(reduce_partials, columns, cuda::kWarpSize * kSlices, 0, s, a.dweight, a.dbias, partials, int(blocks), a.C);
}

}  // namespace

Variant layernorm_backward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary = "float4 warp per row, row in registers; per-block dweight/dbias partials reduced in a fixed order";
  v.params = {block_size_param(), TuningParam{"rows_per_warp", {1, 2, 4, 8, 16}, 4}};
  v.requirements = {{"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }},
                    {"C <= " + std::to_string(kMaxC), [](const Shape& s) { return s.C <= kMaxC; }}};
  v.workspace = [](const Shape& s, const ParamValues& p) {
    return partials_bytes(s.B * s.T, s.C, p.get("block_size"), p.get("rows_per_warp"));
  };
  return v;
}

}  // namespace wb::variants
