// attention_backward, CUDA variant 3: flash-style tiled backward in fp32, scores
// recomputed tile by tile from q, k and lse, no T x T buffer.
//
// Idea: the heads are cut into tiles of `tile` rows (32 or 64; query and key tiles
// have the same size). Three kernels:
//   1. row_dots: D_t = dout_t . out_t for every (b, h, t) into the workspace, one warp
//      per row (and, with dq_atomics=1, zeroes the q part of dqkv).
//   2. flash_dk_dv: one block per (key tile j, b, h) keeps k_j and v_j in shared
//      memory and dk_j, dv_j in registers, and loops over the query tiles i >= j (the
//      tiles i < j are fully masked and skipped): it loads q_i and dout_i, recomputes
//      S = q_i k_j^T and dP = dout_i v_j^T, then P = exp(S * scale - lse) (masked) and
//      dS = P * (dP - D), and adds dv_j += P^T dout_i, dk_j += dS^T q_i. With
//      dq_atomics=1 it also adds dS k_j * scale into dq with atomicAdd.
//   3. flash_dq (dq_atomics=0 only): one block per (query tile i, b, h) keeps q_i,
//      dout_i and dq_i and loops over the key tiles j <= i, recomputing S, dP and dS
//      the same way, dq_i += dS k_j.
// dq_atomics=0 is deterministic (every sum in a fixed order) at the price of
// recomputing S and dP in the dq pass: 7 tile products per pair of tiles instead of 5.
// dq_atomics=1 does the 5 products once, but the order of the float atomics on dq
// varies from run to run: not deterministic.
// Register tiling: 256 threads as 16 x 16; each thread owns a (tile/16) x (tile/16)
// block of the score tile (rows ty + 16a, columns tx + 16b) and, for the products
// into dk/dv/dq, tile/16 rows times hs/16 channels (as float4 columns 4ty + 64e).
// Shared tiles have rows padded by 4 floats, so that the 128-bit reads of 8 lanes
// of a quarter-warp fall on distinct banks. Blocks with the most tiles to visit are
// launched first (key tile 0 for dk/dv, the last query tile for dq).
// Why it should beat variant 2: fewer multiply-adds (tiles above the diagonal are
// never computed: 7 or 5 products over half the T x T square against variant 2's 5
// over all of it, 70% or 50% of its work) and no T x T traffic through memory: the
// scores live in registers and one shared tile; memory moves O(T^2 / tile * hs)
// bytes, mostly from L2, instead of several passes over 2 * B * NH * T^2 floats.
// Limits: hs % 4 == 0 (128-bit loads of rows) and hs <= 128 (kernels instantiated for
// hs padded to 64 or 128, the padding computed as zeros); fp32 FMA on CUDA cores, no
// tensor cores. Shared memory per block: 38.75 KiB (tile 32, hs <= 64), 85.5 KiB
// (tile 64, hs <= 64), 149.5 KiB (tile 64, hs <= 128: needs that much opt-in shared
// memory per block, as sm_80 and sm_90 have); with tile 64, ptxas gives the kernels
// 146-250 registers, so one block (8 warps) per SM -- tile 32 trades reuse for
// occupancy, the sweep decides. Loads are not double-buffered.
// The kernels live in variants/attention/flash_attention_backward.cuh, templated on the
// storage: attention_backward_bf16 cuda/2 runs the same ones on bf16 tensors.
#include <cstddef>

#include "contract/ops/attention_backward.h"
#include "device/cuda/runtime.h"
#include "variants/attention/flash_attention_backward.cuh"

namespace wb::variants {
namespace {

namespace flash = cuda::flash_backward;

void launch(const AttentionBackwardArgs& a, const Launch& l) {
  flash::launch<float>(a.dqkv, a.dout, a.qkv, a.out, a.lse, a.B, a.T, a.C, a.NH, l, "attention_backward cuda/3");
}

}  // namespace

Variant attention_backward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary =
      "flash-style fp32 backward: scores recomputed per tile from lse, masked tiles skipped, dk/dv per key tile in "
      "registers, dq by a second pass (deterministic) or atomics";
  v.numeric = NumericClass::fp32;
  flash::describe<float>(v);
  return v;
}

}  // namespace wb::variants
