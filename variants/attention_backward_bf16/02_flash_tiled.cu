// attention_backward_bf16, CUDA variant 2: the flash-style tiled backward of
// attention_backward cuda/3 on bf16 storage, scores recomputed tile by tile from q, k
// and the fp32 lse, no T x T buffer.
//
// Idea: the same kernels as attention_backward cuda/3 (variants/attention/
// flash_attention_backward.cuh, templated on the storage): row_dots computes
// D_t = dout_t . out_t in fp32 from the widened rows; flash_dk_dv (one block per key
// tile) and flash_dq (one block per query tile, dq_atomics=0) load their q, k, v and
// dout tiles with 64-bit loads of 4 bf16, widen them and keep them in shared memory as
// fp32, so that the score, probability and gradient products are exactly those of the
// fp32 kernels; dk, dv (and dq) are accumulated in fp32 registers over all the tiles
// and each is rounded to bf16 once, when it is stored. dq_atomics=1 adds dS k_j from
// every key tile into an fp32 (B, T, C) buffer in the workspace with float atomics
// (never into bf16, which would round at every addition), and a last kernel rounds it
// into dqkv once.
// Why it should beat variant 1: the causal mask skips the tiles above the diagonal,
// every score is computed from tiles in shared memory by a 16 x 16 thread grid with
// register micro-tiles (instead of one thread walking uncoalesced rows), D is computed
// once per row instead of once per pair, the sums live in registers instead of an fp32
// workspace in global memory, and the global reads are coalesced and half the bytes of
// the fp32 kernel's.
// Limits: those of attention_backward cuda/3: hs % 4 == 0 and hs <= 128; 256 threads;
// the same shared memory per block (the tiles are fp32: 38.75 KiB at tile 32, hs <= 64;
// 85.5 KiB at tile 64, hs <= 64; 149.5 KiB at tile 64, hs <= 128); fp32 FMA on CUDA
// cores, no tensor cores (a bf16 mma would be the next rung); tensors 8-byte aligned.
// dq_atomics=1 is not deterministic (the order of the fp32 atomics varies) and needs
// 4 B*T*C more bytes of workspace and one more kernel.
#include <cuda_bf16.h>

#include <cstddef>
#include <string>

#include "contract/ops/attention_backward.h"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention/flash_attention_backward.cuh"

namespace wb::variants {
namespace {

namespace flash = cuda::flash_backward;

void launch(const AttentionBackwardBf16Args& a, const Launch& l) {
  flash::launch<__nv_bfloat16>(cuda::as_cuda(a.dqkv), cuda::as_cuda(a.dout), cuda::as_cuda(a.qkv), cuda::as_cuda(a.out),
                               a.lse, a.B, a.T, a.C, a.NH, l, "attention_backward_bf16 cuda/2");
}

}  // namespace

Variant attention_backward_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary =
      "flash-style tiles of widened bf16 in shared memory, fp32 scores and sums, masked tiles skipped, each gradient "
      "rounded once; dq by a second pass (deterministic) or fp32 atomics into the workspace";
  flash::describe<__nv_bfloat16>(v);
  return v;
}

}  // namespace wb::variants
