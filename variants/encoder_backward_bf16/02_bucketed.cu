// encoder_backward_bf16, CUDA variant 2: deterministic, positions bucketed by token.
//
// Idea: encoder_backward cuda/2 on bf16 storage (variants/encoder_backward/token_runs.cuh): the
// positions sorted by (token, position) in the workspace with a bucketed histogram,
// scan, scatter and in-bucket rank; then one block per run of a token and 32 channels
// sums dout over the run in fp32 (slices, then slice sums in order) and rounds the
// dwte element once from old + total; dwpe[t, c] is summed over b in order and rounded
// once.
// Why it should beat variant 1: the sort costs O(B*T) plus the square of a bucket's
// size instead of (B*T)^2 per channel; each run is summed in registers and shared
// memory; no atomics on the gradients, so the result is bitwise the same on every run.
// This is the shape of llm.c's deterministic bf16 encoder backward.
// Limits: seven operations on the stream; a token that fills most of the batch costs
// the square of its count in step 4; 16-bit accesses to dout. Workspace: 8H + 16 B*T
// bytes (H the bucket count, a power of two >= B*T).
#include <cuda_bf16.h>

#include <cstdint>
#include <stdexcept>

#include "contract/ops/encoder_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/encoder_backward/token_runs.cuh"

namespace wb::variants {
namespace {

namespace runs = cuda::token_runs;

void launch(const EncoderBackwardBf16Args& a, const Launch& l) {
  const int positions = a.B * a.T;
  if (l.workspace_bytes < runs::workspace_for(positions))
    throw std::logic_error("encoder_backward_bf16 cuda/2: workspace too small");
  const runs::Layout w = runs::layout(l.workspace, positions);
  const cudaStream_t s = cuda::stream(l);
  runs::sort_positions_by_token(w, a.inp, positions, s);

  const int block = l.block_size();
  const dim3 runs_grid(unsigned(positions), cuda::grid_for(a.C, cuda::kWarpSize));
  WB_LAUNCH(runs::accumulate_runs<__nv_bfloat16>, runs_grid, block, 0, s, cuda::as_cuda(a.dwte), cuda::as_cuda(a.dout),
            w.sorted, w.run_len, a.inp, a.C);
  const int64_t plane = int64_t(a.T) * a.C;
  WB_LAUNCH(runs::accumulate_positions<__nv_bfloat16>, cuda::grid_for(plane, block), block, 0, s,
            cuda::as_cuda(a.dwpe), cuda::as_cuda(a.dout), a.B, a.T, a.C);
}

}  // namespace

Variant encoder_backward_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "deterministic: positions sorted by (token, position), each token's run summed in fp32, rounded once";
  v.params = {block_size_param()};
  v.requirements = {{"C <= 2097120", [](const Shape& s) { return s.C <= 65535 * 32; }}};
  v.workspace = [](const Shape& s, const ParamValues&) { return runs::workspace_for(s.B * s.T); };
  return v;
}

}  // namespace wb::variants
