// attention_backward_bf16, CUDA variant 3: FlashAttention-2's backward on tensor cores.
//
// NOT YET RUN ON A DEVICE: compiled by nvcc for sm_80 and sm_90 on a machine without a
// GPU, and checked in emulation (emu/tensor_core_instructions.h models mma, ldmatrix and
// cp.async lane by lane).
//
// Idea: D = rowsum(dO o O) in fp32 first (cuda/2's row_dots). Then one block per key
// tile of 16 x warps keys (key_tile 32 or 64) of one (b, h): a warp holds its 16 K and V
// rows as mma A fragments and its dK and dV in fp32 registers, while the query tiles
// (query_tile rows of Q and dO, with their lse and D) stream through shared memory
// behind a two-stage cp.async pipeline, starting at the tile that holds the block's
// first key. Per tile it computes the transposed scores S^T = K Q^T with mma.sync
// m16n8k16, P^T = exp(scale S^T - lse) (masked), dP^T = V dO^T, dS^T = P^T o (dP^T - D),
// and adds dV += P^T dO and dK += dS^T Q, P^T and dS^T turned from C fragments into A
// fragments in registers (keys are the rows of everything: no shuffle, no trip through
// shared memory), Q and dO loaded by ldmatrix from padded, conflict-free rows (.trans
// where their rows are the product's k). dQ in one of two forms (dq_atomics):
//   0  (deterministic, the default) a second kernel, one block per query tile of
//      key_tile rows (the same 2 or 4 warps, a warp per 16 rows), recomputes S = Q K^T,
//      P, dP = dO V^T and dS over streamed key tiles of query_tile keys up to its
//      diagonal and adds dQ += dS K in registers;
//   1  the dk/dv blocks write dS^T (bf16) into shared memory and add dQ_tile = dS K
//      (ldmatrix .trans of dS^T and of K) with fp32 atomics into a (B, T, C) buffer of
//      the workspace, which a last kernel rounds into dqkv (cuda/2's narrow_dq); one
//      kernel fewer, but not deterministic (the order of the atomics varies).
// Every gradient is accumulated in fp32 and rounded to bf16 once, when stored
// (variants/attention/flash_attention_backward_mma.cuh has the details).
// Numerics: P and dS are rounded to bf16 as the mma's A (and, for dQ's atomic form, A
// through shared memory) operands, so each gradient may be off by about 2^-9 of its
// terms relative beyond one rounding: the bf16 numeric class, whose tolerance for dqkv
// (summed over T) covers it, as for the forward's cuda/4, which rounds P the same way.
// Parameters: key_tile 32 or 64 (the rows a block holds in its 2 or 4 warps: keys in the
// dk/dv kernel, queries in the dq kernel), query_tile 16, 32 or 64 (the rows of a tile
// streamed through shared memory: queries in the dk/dv kernel, keys in the dq kernel),
// dq_atomics 0 or 1.
// Why it should beat variant 2: each K and V row is read once per key tile and each Q
// and dO row once per query tile (instead of into fp32 tiles re-read from shared memory
// for every product), and the five products run on tensor cores instead of fp32 FMAs.
// Limits: C / NH % 4 == 0 and C / NH <= 64 (heads below 64 are zero-padded to 64
// channels: a kernel built for GPT-2's head size), compute capability 8.0; tensors
// 8-byte aligned. dk, dv and dq are stored straight from the accumulators, a 4-byte pair
// per lane. Shared memory: up to 64 KiB (dk/dv, key_tile 64, query_tile 64, dq_atomics
// 1) and 54 KiB (dq kernel, 64 and 64).
#include "contract/ops/attention_backward.h"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention/flash_attention_backward_mma.cuh"

namespace wb::variants {
namespace {

namespace fb = cuda::flash_attention_backward_mma;

void launch(const AttentionBackwardBf16Args& a, const Launch& l) {
  fb::launch(cuda::as_cuda(a.dqkv), cuda::as_cuda(a.dout), cuda::as_cuda(a.qkv), cuda::as_cuda(a.out), a.lse, a.B, a.T,
             a.C, a.NH, l.get("key_tile"), l.get("query_tile"), l.get("dq_atomics") != 0, l.workspace,
             l.workspace_bytes, cuda::stream(l), "attention_backward_bf16 cuda/3");
}

}  // namespace

Variant attention_backward_bf16_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary =
      "FlashAttention-2 backward on mma.sync m16n8k16: a warp per 16 keys with K, V, dK, dV in registers, Q/dO tiles "
      "through a 2-stage cp.async pipeline, transposed scores so P^T and dS^T are A fragments; dq by a second pass "
      "(deterministic) or fp32 atomics";
  v.numeric = NumericClass::bf16;
  v.min_compute_capability = 80;
  v.params = {TuningParam{"key_tile", {32, 64}, 64}, TuningParam{"query_tile", {16, 32, 64}, 64},
              TuningParam{"dq_atomics", {0, 1}, 0}};
  v.deterministic = [](const ParamValues& p) { return p.get("dq_atomics") == 0; };
  v.requirements = {cuda::flash_attention_forward::head_size_requirement()};
  v.workspace = [](const Shape& s, const ParamValues& p) {
    return fb::workspace_bytes(s.B, s.T, s.C, s.NH, p.get("dq_atomics") != 0);
  };
  return v;
}

}  // namespace wb::variants
