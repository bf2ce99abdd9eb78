// matmul_gelu_forward_bf16, CUDA variant 4: matmul_forward_bf16 cuda/6's tensor-core
// kernel with the bias + GELU epilogue fused.
//
// NOT YET RUN ON A DEVICE: compiled by nvcc for sm_80 and sm_90 on a machine without a
// GPU, and checked in emulation (emu/tensor_core_instructions.h models mma, ldmatrix and
// cp.async lane by lane).
//
// Idea: one kernel template for both ops (variants/matmul/tensor_core_gemm.cuh, gemm_cp_async with
// the kBiasGelu epilogue): a tile x tile block tile of mma.m16n8k16 warp tiles fed by ldmatrix from
// padded slabs that a 2-4 stage cp.async pipeline fills. The epilogue, straight from
// the fp32 accumulators: sum = acc + bias; pre = bf16(sum) and out = bf16(gelu(sum)),
// the GELU of the unrounded sum (the op's contract: each output rounded once, as
// cuBLASLt's GELU_AUX_BIAS epilogue and cuda/1 do), tanhf as in every gelu variant.
// Parameters: tile and warp_tile (64 over 32, 128 over 64, 128 over 32) and stages 2, 3
// or 4, as matmul_forward_bf16 cuda/6.
// Why it should beat cuda/1..3: cuda/1 is scalar CUDA cores; cuda/2 and cuda/3 use the
// library's tensor-core kernels but cuda/2 makes a second pass for the GELU and the
// library epilogue of cuda/3 is all it can be; here the GELU costs nothing but the
// epilogue's arithmetic, and pre and out are written from the same registers.
// Limits: C % 8 == 0 and 16-byte aligned inp and weight (a requirement, and checked at
// launch), compute capability 8.0 or newer (checked at launch). Two 16-bit (or, OC even,
// one 32-bit) stores per output pair per tensor: no 128-bit output stores.
#include <cuda_bf16.h>

#include "contract/ops/matmul_gelu_forward.h"
#include "device/cuda/runtime.h"
#include "variants/matmul/bf16_slabs.cuh"
#include "variants/matmul/tensor_core_gemm.cuh"

namespace wb::variants {
namespace {

namespace tg = cuda::tensor_core_gemm;

void launch(const MatmulGeluForwardBf16Args& a, const Launch& l) {
  constexpr const char* kWhat = "matmul_gelu_forward_bf16 cuda/4";
  tg::launch_cp_async<tg::kBiasGelu>(tg::linear_layer(a, a.pre, kWhat), l, kWhat);
}

}  // namespace

Variant matmul_gelu_forward_bf16_cuda_4() {
  Variant v = Variant::of(&launch);
  v.summary =
      "mma.sync + ldmatrix warp tiles behind a 2-4 stage cp.async pipeline; pre and gelu of the unrounded "
      "fp32 sum + bias, each rounded once, from the accumulators";
  tg::declare_tiles(v, true);
  return v;
}

}  // namespace wb::variants
