// attention_forward, CUDA variant 5: cuDNN fused scaled-dot-product attention (bf16).
//
// Idea: hand the whole op to cuDNN's fused flash-attention engine through the cuDNN 9
// backend (graph) API (device/cuda/cudnn_sdpa.h: the graph, the engine choice, the
// plan cache, the launch; shared with attention_forward_bf16 cuda/3). A conversion
// kernel copies the fused qkv to bf16 in the workspace, unchanged in layout, so that
// Q, K and V are strided views of it:
//   Q, V   (B, NH, T, hs)  strides (3CT, hs, 3C, 1), at element offsets 0 and 2C
//   K^T    (B, NH, hs, T)  strides (3CT, hs, 1, 3C), at element offset C
// The operation graph is the SDPA pattern the engine recognises:
//   S = Q K^T (fp32 accumulate); S *= scale (by-value scalar 1/sqrt(hs));
//   causal mask: row = gen_index(S, axis 2), col = gen_index(S, axis 3),
//     keep = row >= col, S = keep ? S : -inf (binary select);
//   softmax: m = max over keys, e = exp(S - m), z = sum of e,
//     Stats = m + log(z), P = e / z (bf16);  O = P V (bf16).
// Stats is therefore exactly lse: the natural-log log-sum-exp of the scaled, masked
// scores, fp32, (B, NH, T, 1) -- the layout of lse -- so cuDNN writes lse directly.
// O is written as bf16 in the (B, T, C) layout (strides (TC, hs, C, 1)) and a second
// kernel converts it into out.
// The graph, the engine choice (heuristics mode A, then fallback) and the finalised
// execution plan are built once per shape, stream and handle and cached (the plan owns
// compiled kernels; building it can take a while, running it does not).
// Why it should beat variant 4: tensor-core bf16 matmuls inside a vendor-tuned fused
// kernel; the fp32 <-> bf16 conversions are two streaming passes over B*T*4C values.
// Limits: bf16 numeric class (inputs rounded to 8-bit mantissas, P rounded to bf16
// before P V); hs % 8 == 0 and hs <= 128 (cuDNN's head-size rule that also holds on
// sm_80); cuDNN's own workspace is only known once the plan exists: the declared
// workspace reserves a generous bound for it and the launch fails with a clear message
// if a plan ever asks for more. qkv, out and lse 16-byte aligned (otherwise skipped).
// Cached plans live until the process ends.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "base/errors.h"
#include "contract/ops/attention_forward.h"
#include "device/cuda/cudnn_sdpa.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention_forward/common.cuh"

namespace wb::variants {
namespace {

constexpr std::size_t kBf16Bytes = 2;  // sizeof(__nv_bfloat16)
constexpr std::size_t kAlign = 256;

std::size_t round_up_bytes(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  std::size_t qkv16 = 0, o16 = 0, cudnn = 0;  // byte offsets into the workspace
  std::size_t cudnn_bound = 0, total = 0;
};

Layout layout(int64_t B, int64_t T, int64_t C, int64_t NH) {
  Layout w;
  const std::size_t btc = std::size_t(B) * T * C;
  w.qkv16 = 0;
  w.o16 = round_up_bytes(3 * btc * kBf16Bytes);
  w.cudnn = w.o16 + round_up_bytes(btc * kBf16Bytes);
  w.cudnn_bound = cuda::sdpa::workspace_bound(B, T, NH);
  w.total = w.cudnn + w.cudnn_bound;
  return w;
}

static_assert(sizeof(__nv_bfloat16) == kBf16Bytes);

// ---- conversion kernels (n4 = number of float4 groups; all counts are multiples of 4) ----

__global__ void to_bf16(__nv_bfloat16* dst, const float* src, int64_t n4) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const float4 x = reinterpret_cast<const float4*>(src)[i];
  __nv_bfloat162* d = reinterpret_cast<__nv_bfloat162*>(dst) + 2 * i;
  d[0] = __floats2bfloat162_rn(x.x, x.y);
  d[1] = __floats2bfloat162_rn(x.z, x.w);
}

__global__ void from_bf16(float* dst, const __nv_bfloat16* src, int64_t n4) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const __nv_bfloat162* s = reinterpret_cast<const __nv_bfloat162*>(src) + 2 * i;
  const float2 a = __bfloat1622float2(s[0]);
  const float2 b = __bfloat1622float2(s[1]);
  reinterpret_cast<float4*>(dst)[i] = make_float4(a.x, a.y, b.x, b.y);
}

void launch(const AttentionForwardArgs& a, const Launch& l) {
  // The conversions move float4s of qkv and out; cuDNN's Stats (lse) is declared 16-byte
  // aligned (the workspace's parts are, at multiples of 256 bytes).
  cuda::require_aligned16("attention_forward cuda/5 (float4 conversions, cuDNN tensors declared 16-byte aligned)",
                          {a.qkv, a.out, a.lse});
  const cudaStream_t stream = cuda::stream(l);
  const int block = l.block_size();
  const Layout w = layout(a.B, a.T, a.C, a.NH);
  char* base = static_cast<char*>(l.workspace);
  auto* qkv16 = reinterpret_cast<__nv_bfloat16*>(base + w.qkv16);
  auto* o16 = reinterpret_cast<__nv_bfloat16*>(base + w.o16);
  const int64_t btc = int64_t(a.B) * a.T * a.C;

  const cuda::sdpa::Handle handle = cuda::sdpa::handle(l);
  // cuDNN's part of the workspace: what the layout declares, what the launch's holds past w.cudnn
  const std::size_t room = std::min(w.cudnn_bound, l.workspace_bytes > w.cudnn ? l.workspace_bytes - w.cudnn : 0);
  const cuda::sdpa::Plan& plan =
      cuda::sdpa::plan_for(handle, stream, a.B, a.T, a.C, a.NH, room, "attention_forward cuda/5");

  const int64_t n4_in = 3 * btc / 4;  // hs % 8 == 0, so C and every count here are multiples of 4
  WB_LAUNCH(to_bf16, cuda::grid_for(n4_in, block), block, 0, stream, qkv16, a.qkv, n4_in);

  cuda::sdpa::execute(handle, plan, qkv16, o16, a.lse, a.C, attention::head_size(a), base + w.cudnn);

  const int64_t n4_out = btc / 4;
  WB_LAUNCH(from_bf16, cuda::grid_for(n4_out, block), block, 0, stream, a.out, o16, n4_out);
}

}  // namespace

Variant attention_forward_cuda_5() {
  Variant v = cuda::sdpa::rung<AttentionForwardArgs>(
      &launch,
      "qkv to bf16, cuDNN backend-graph fused SDPA (causal, stats = lse), bf16 out back to fp32");
  v.params = {block_size_param()};
  v.workspace = [](const Shape& s, const ParamValues&) { return layout(s.B, s.T, s.C, s.NH).total; };
  return v;
}

}  // namespace wb::variants
