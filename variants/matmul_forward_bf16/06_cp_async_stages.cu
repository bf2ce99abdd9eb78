// matmul_forward_bf16, CUDA variant 6: cuda/5's mma.sync warp tiles behind a cp.async
// pipeline of 2 to 4 stages.
//
// NOT YET RUN ON A DEVICE: compiled by nvcc for sm_80 and sm_90 on a machine without a
// GPU, and checked in emulation (emu/tensor_core_instructions.h models mma, ldmatrix and
// cp.async lane by lane).
//
// Idea: the slabs no longer pass through registers. Each thread issues cp.async.cg
// copies of its 16-byte chunks straight from global to shared memory, one commit group
// per slab, and keeps stages - 1 slabs in flight while the warps multiply the oldest
// landed one (variants/matmul/tensor_core_gemm.cuh, gemm_cp_async: the wait / barrier / refill
// order and why it is safe with one barrier per slab). Chunks past B*T, OC or C use
// cp.async's src-size form with 0 bytes read: the copy zero-fills them, no branch
// around the copy, no separate store of zeros. The warp math (ldmatrix.x4 from padded,
// conflict-free rows; mma.m16n8k16) and the epilogue (bias in fp32, one rounding,
// stores straight from the accumulators) are cuda/5's. The slabs live in dynamic
// shared memory: stages x 2 x tile x 80 bytes, up to 80 KiB (tile 128, 4 stages),
// above the default 48 KiB, so the launcher opts in.
// Parameters: tile and warp_tile as cuda/5 (64 over 32, 128 over 64, 128 over 32), and
// stages 2, 3 or 4 -- a run-time value of one kernel per pair of tiles (3 instantiations
// for 9 configurations): only the wait_group immediate depends on it, picked by a
// uniform switch.
// Why it should beat cuda/5: global loads no longer occupy registers (cuda/5 holds the
// next slab in 2 x 16 bytes per chunk per thread, which competes with the accumulators
// and lowers occupancy) or issue slots for the register-to-shared copy, and with 3 or 4
// stages two or three slabs of memory latency are covered instead of one.
// Limits: C % 8 == 0 and 16-byte aligned inp and weight (a requirement, and checked at
// launch), compute capability 8.0 or newer (checked at launch). Shared memory per block
// is the variant's own choice: the table of compiled kernels decides per architecture
// whether a configuration can launch (all of them fit sm_86/sm_89's 99 KiB).
#include <cuda_bf16.h>

#include "contract/ops/matmul_forward.h"
#include "device/cuda/runtime.h"
#include "variants/matmul/bf16_slabs.cuh"
#include "variants/matmul/tensor_core_gemm.cuh"

namespace wb::variants {
namespace {

namespace tg = cuda::tensor_core_gemm;

void launch(const MatmulForwardBf16Args& a, const Launch& l) {
  constexpr const char* kWhat = "matmul_forward_bf16 cuda/6";
  tg::launch_cp_async<tg::kBias>(tg::linear_layer(a, nullptr, kWhat), l, kWhat);
}

}  // namespace

Variant matmul_forward_bf16_cuda_6() {
  Variant v = Variant::of(&launch);
  v.summary =
      "cuda/5's mma.sync + ldmatrix warp tiles behind a 2-4 stage cp.async pipeline (zero-filled edges), bias "
      "and one rounding in the epilogue";
  tg::declare_tiles(v, true);
  return v;
}

}  // namespace wb::variants
