// attention_forward_bf16, CUDA variant 4: FlashAttention-2-style tiles on tensor cores.
//
// NOT YET RUN ON A DEVICE: compiled by nvcc for sm_80 and sm_90 on a machine without a
// GPU, and checked in emulation (emu/tensor_core_instructions.h models mma, ldmatrix and
// cp.async lane by lane).
//
// Idea: a block holds 16 x warps query rows of one (b, h), a warp 16 rows with its Q
// fragments, running max and sum and unnormalised output in registers; K and V stream
// through shared memory in tiles of key_tile rows behind a cp.async pipeline of 2 or 3
// stages. Per tile a warp computes S = Q K^T with mma.sync m16n8k16 (ldmatrix from
// padded, conflict-free rows), masks the tile that holds its diagonal, updates its
// online softmax in log2 units over each lane quad, and adds P V with S's accumulators
// rounded to bf16 as P's A fragments (no trip through shared memory) and V loaded by
// ldmatrix .trans. Tiles above a warp's diagonal are neither computed nor, past the
// block's last row, loaded. lse is fp32 (natural log), as variants 1 and 2 write it
// (variants/attention/flash_attention_forward.cuh has the details).
// Numerics: P is rounded to bf16 before P V (the mma's A operand), while the row sum l
// adds the unrounded fp32 p: each weight is off by up to 2^-9 of itself, so out may be
// off by about 2^-9 of max |v| beyond one rounding. Hence the bf16 numeric class, whose
// tolerance for out (2e-2 absolute and relative, plus half an ulp) covers it, as for
// cuDNN's cuda/3, which rounds P the same way.
// Parameters: query_tile 32, 64 or 128 rows (2, 4 or 8 warps), key_tile 16, 32 or 64
// keys, stages 2 or 3 (one kernel per key_tile; query_tile and stages are run-time
// values).
// Why it should beat variant 2: each K and V row is read from global memory once per
// block of query rows instead of once per row, and the scores and P V run on tensor
// cores instead of fp32 FMAs with shuffles.
// Limits: C / NH % 4 == 0 and C / NH <= 64 (heads below 64 are zero-padded to 64
// channels: a kernel built for GPT-2's head size), compute capability 8.0; qkv 8-byte
// aligned (16-byte chunks when hs % 8 == 0 and qkv is 16-byte aligned). out is stored
// straight from the accumulators, a 4-byte pair per lane (not staged for 16-byte stores).
#include "contract/ops/attention_forward.h"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention/flash_attention_forward.cuh"

namespace wb::variants {
namespace {

namespace fa = cuda::flash_attention_forward;

void launch(const AttentionForwardBf16Args& a, const Launch& l) {
  fa::launch(cuda::as_cuda(a.out), a.lse, cuda::as_cuda(a.qkv), a.B, a.T, a.C, a.NH, l.get("query_tile"),
             l.get("key_tile"), l.get("stages"), cuda::stream(l), "attention_forward_bf16 cuda/4");
}

}  // namespace

Variant attention_forward_bf16_cuda_4() {
  Variant v = Variant::of(&launch);
  v.summary =
      "FlashAttention-2 tiles on mma.sync m16n8k16: a warp per 16 query rows, K/V through a 2-3 stage cp.async "
      "pipeline, online softmax in registers, P rounded to bf16 as the A fragment of P V";
  v.numeric = NumericClass::bf16;
  v.min_compute_capability = 80;
  v.params = {TuningParam{"query_tile", {32, 64, 128}, 64}, TuningParam{"key_tile", {16, 32, 64}, 64},
              TuningParam{"stages", {2, 3}, 2}};
  v.requirements = {fa::head_size_requirement()};
  return v;
}

}  // namespace wb::variants
