// matmul_backward_bf16, CUDA variant 1: the naive port, one thread per output element.
//
// Idea: matmul_backward cuda/1 on bf16 storage: two plain kernels, each thread walking
// one dot product over widened bf16 values, the products (exact in fp32: 8-bit by
// 8-bit significands) summed in fp32:
//   dinp[r, c]    = bf16(sum over OC of dout[r, o] * weight[o, c])          (per (r, c))
//   dweight[o, c] = bf16(dweight[o, c] + sum over rows of dout[r, o] * inp[r, c])  (per (o, c))
// Each output is rounded once to nearest even; dweight's old bf16 value is widened and
// added to the fp32 sum before that one rounding (rounding the sum first and adding in
// bf16 would round twice). Consecutive threads take consecutive c, so the reads of
// weight and inp coalesce and dout's is a broadcast. Fixed order: deterministic.
// Why: the baseline of the bf16 ladder; plainly correct for every shape.
// Limits: as matmul_backward cuda/1: nothing is reused through shared memory or
// registers, every multiply-add loads two 16-bit values, and dweight's dot products run
// over all B*T rows serially.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "contract/ops/matmul_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/matmul/matmul.cuh"

namespace wb::variants {
namespace {

// dinp (rows, C) = dout (rows, OC) @ weight (OC, C), rounded once
__global__ void dinp_bf16_thread_per_element(__nv_bfloat16* dinp, const __nv_bfloat16* dout,
                                             const __nv_bfloat16* weight, int64_t rows, int C, int OC) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= rows * C) return;
  const int64_t r = idx / C;
  const int c = int(idx % C);
  const __nv_bfloat16* g = dout + r * OC;
  float acc = 0.0f;
  for (int o = 0; o < OC; ++o) acc += __bfloat162float(g[o]) * __bfloat162float(weight[int64_t(o) * C + c]);
  dinp[idx] = __float2bfloat16(acc);
}

// dweight (OC, C) = old + dout^T (OC, rows) @ inp (rows, C), rounded once
__global__ void dweight_bf16_thread_per_element(__nv_bfloat16* dweight, const __nv_bfloat16* dout,
                                                const __nv_bfloat16* inp, int64_t rows, int C, int OC) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= int64_t(OC) * C) return;
  const int o = int(idx / C);
  const int c = int(idx % C);
  float acc = 0.0f;
  for (int64_t r = 0; r < rows; ++r) acc += __bfloat162float(dout[r * OC + o]) * __bfloat162float(inp[r * C + c]);
  dweight[idx] = __float2bfloat16(__bfloat162float(dweight[idx]) + acc);
}

void launch(const MatmulBackwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  const cudaStream_t stream = cuda::stream(l);
  WB_LAUNCH(dinp_bf16_thread_per_element, cuda::grid_for(rows * a.C, block), block, 0, stream, cuda::as_cuda(a.dinp),
            cuda::as_cuda(a.dout), cuda::as_cuda(a.weight), rows, a.C, a.OC);
  WB_LAUNCH(dweight_bf16_thread_per_element, cuda::grid_for(int64_t(a.OC) * a.C, block), block, 0, stream,
            cuda::as_cuda(a.dweight), cuda::as_cuda(a.dout), cuda::as_cuda(a.inp), rows, a.C, a.OC);
}

// Both kernels put one thread per element on gridDim.x.
std::optional<std::string> grid_limit(const Shape& s, const ParamValues& p) {
  const int64_t block = p.get("block_size");
  const int64_t elements = std::max(cuda::matmul::rows_of(s), s.OC) * s.C;
  if ((elements + block - 1) / block > cuda::matmul::kMaxGridX)
    return "max(B*T, OC) * C needs more blocks of " + std::to_string(block) + " than gridDim.x allows";
  return std::nullopt;
}

}  // namespace

Variant matmul_backward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element of dinp and of dweight: widened bf16 dot products in fp32, rounded once";
  v.params = {block_size_param()};
  v.launch_limit = grid_limit;
  return v;
}

}  // namespace wb::variants
