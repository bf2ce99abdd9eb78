// matmul_backward_bf16, CUDA variant 4: both gradients on the hand-written tensor-core
// kernel of matmul_forward_bf16 cuda/6, its operands read transposed by ldmatrix.trans.
//
// NOT YET RUN ON A DEVICE: compiled by nvcc for sm_80 and sm_90 on a machine without a
// GPU, and checked in emulation (emu/tensor_core_instructions.h models mma, ldmatrix and
// cp.async lane by lane).
//
// Idea: two launches of variants/matmul/tensor_core_gemm.cuh's gemm_cp_async (mma.m16n8k16 warp
// tiles, a 2-4 stage cp.async pipeline of padded slabs), which takes each operand either
// k-contiguous or k-major and loads the k-major ones with ldmatrix .trans, straight in
// mma's fragment layout: nothing is transposed in memory.
//   dinp    (rows x C) = dout (rows x OC, k-contiguous) @ weight (OC x C, k-major)
//   dweight (OC x C)  += dout^T (dout is rows x OC: k-major) @ inp (rows x C, k-major)
// dinp is rounded once from the fp32 sum; dweight's epilogue widens the old bf16 value
// and adds the fp32 sum before its one rounding (the op's contract; no second pass, no
// fp32 accumulator in memory). Each output is one fixed-order sum: deterministic. The
// bias gradient is the separate op matmul_backward_bias.
// Parameters: tile, warp_tile and stages as matmul_forward_bf16 cuda/6, shared by both
// launches.
// Why it should beat cuda/1 (and stand beside cuda/2..3): tensor cores and shared-memory
// reuse instead of scalar dot products; unlike cuda/2 no fp32 accumulators make a round
// trip through memory, and dweight's sum over B*T rows is tiled like any other K.
// Limits: C % 8 == 0 and OC % 8 == 0 (rows of every operand are whole 16-byte chunks;
// a requirement) and 16-byte aligned dout, weight and inp (checked at launch), compute
// capability 8.0 or newer (checked at launch). B*T needs no multiple: dweight's k rows
// are zero-filled one at a time. dweight's K is B*T: at GPT-2 sizes (B*T = 8192) its
// blocks each walk 256 slabs with only (OC / tile) x (C / tile) blocks in the grid (a
// split over the rows would need fp32 partials in a workspace; not done here).
#include <cuda_bf16.h>

#include <optional>
#include <string>

#include "contract/ops/matmul_backward.h"
#include "device/cuda/runtime.h"
#include "variants/matmul/bf16_slabs.cuh"
#include "variants/matmul/matmul.cuh"
#include "variants/matmul/tensor_core_gemm.cuh"

namespace wb::variants {
namespace {

namespace tg = cuda::tensor_core_gemm;

void launch(const MatmulBackwardBf16Args& a, const Launch& l) {
  constexpr const char* kWhat = "matmul_backward_bf16 cuda/4";
  tg::require_launchable(kWhat, {a.dout, a.weight, a.inp});
  const int rows = a.B * a.T;
  auto aligned4 = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 4 == 0; };
  __nv_bfloat16* const dinp = cuda::as_cuda(a.dinp);
  __nv_bfloat16* const dweight = cuda::as_cuda(a.dweight);
  const __nv_bfloat16* const dout = cuda::as_cuda(a.dout);
  // out, pre, A, B, bias, M, N, K, lda, ldb, pair stores (C % 8 == 0: N even)
  const tg::Problem dinp_product{dinp, nullptr, dout, cuda::as_cuda(a.weight), nullptr, rows, a.C,
                                 a.OC, a.OC,    a.C,  aligned4(dinp)};
  const tg::Problem dweight_product{dweight, nullptr, dout, cuda::as_cuda(a.inp), nullptr, a.OC, a.C,
                                    rows,    a.OC,    a.C,  aligned4(dweight)};
  tg::launch_cp_async<tg::kBias, true, false>(dinp_product, l, kWhat);
  tg::launch_cp_async<tg::kAccumulate, false, false>(dweight_product, l, kWhat);
}

// Both products put their row tiles on gridDim.y: B*T rows for dinp, OC for dweight.
std::optional<std::string> launch_limit(const Shape& s, const ParamValues& p) {
  if (auto why = tg::tile_limit(s, p)) return why;
  const int64_t oc_tiles = (s.OC + p.get("tile") - 1) / p.get("tile");
  if (oc_tiles > cuda::matmul::kMaxGridY) return "OC needs more row tiles than gridDim.y allows (65535)";
  return std::nullopt;
}

}  // namespace

Variant matmul_backward_bf16_cuda_4() {
  Variant v = Variant::of(&launch);
  v.summary =
      "dinp and dweight on mma.sync + ldmatrix(.trans) warp tiles behind a 2-4 stage cp.async pipeline; "
      "dweight = bf16(old + fp32 sum) in the epilogue, each output rounded once";
  tg::declare_tiles(v, true);
  v.requirements.push_back({"OC % 8 == 0", [](const Shape& s) { return s.OC % 8 == 0; }});
  v.launch_limit = launch_limit;
  return v;
}

}  // namespace wb::variants
