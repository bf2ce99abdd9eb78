// attention_forward_bf16, CUDA variant 3: cuDNN fused scaled-dot-product attention,
// straight on the bf16 qkv and out.
//
// NEVER RUN ON A GPU: written and compiled (nvcc sm_80/sm_90) on a machine without
// one. The emulator runs it against its stand-in for cuDNN (device/cuda/cudnn_sdpa_emu.cpp:
// the graph's math on the host), which checks this file's views, strides and workspace
// but not cuDNN itself: its first `wb check` on a device is cuDNN's first test here.
//
// Idea: attention_forward cuda/5's cuDNN SDPA graph (device/cuda/cudnn_sdpa.h: causal
// mask, Stats = lse, the engine choice and the plan cache) without its conversions:
// with bf16 storage, Q, K and V are strided views straight into the bf16 qkv input (at
// element offsets 0, C and 2C, row stride 3C), O is written straight into out (B, T,
// C) and the fp32 Stats into lse. The only workspace is cuDNN's own.
// Why it should beat variant 2: tensor-core bf16 matmuls inside a vendor-tuned fused
// flash-attention kernel, k and v reused through shared memory; against
// attention_forward cuda/5, no fp32 <-> bf16 passes over B*T*4C values.
// Numerics: cuDNN rounds P to bf16 before P V, so out is not the one rounding of the
// fp32 weighted sum that the op's contract describes: the bf16 numeric class and its
// tolerance, as for attention_forward cuda/5. lse is fp32 (the natural-log log-sum-exp).
// Limits: hs % 8 == 0 and hs <= 128 (cuDNN's head-size rule that also holds on sm_80);
// qkv and out 16-byte aligned (the graph declares 16-byte aligned tensors; otherwise
// skipped); cuDNN's own workspace is only known once the plan exists: the declared
// workspace is the same bound as cuda/5's, and the launch fails with a clear message if
// a plan ever asks for more. Cached plans live until the process ends.
#include <algorithm>
#include <cstdint>
#include <string>

#include "base/errors.h"
#include "contract/ops/attention_forward.h"
#include "device/cuda/cudnn_sdpa.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

void launch(const AttentionForwardBf16Args& a, const Launch& l) {
  cuda::require_aligned16("attention_forward_bf16 cuda/3 (cuDNN tensors declared 16-byte aligned)",
                          {a.qkv, a.out, a.lse});
  const cudaStream_t stream = cuda::stream(l);
  const std::size_t bound = cuda::sdpa::workspace_bound(a.B, a.T, a.NH);

  const cuda::sdpa::Handle handle = cuda::sdpa::handle(l);
  const cuda::sdpa::Plan& plan = cuda::sdpa::plan_for(
      handle, stream, a.B, a.T, a.C, a.NH, std::min(bound, l.workspace_bytes), "attention_forward_bf16 cuda/3");

  // hs % 8 == 0, so C is a multiple of 8 and qkv + C, qkv + 2C stay 16-byte aligned
  cuda::sdpa::execute(handle, plan, cuda::as_cuda(a.qkv), cuda::as_cuda(a.out), a.lse, a.C, a.C / a.NH, l.workspace);
}

}  // namespace

Variant attention_forward_bf16_cuda_3() {
  Variant v = cuda::sdpa::rung<AttentionForwardBf16Args>(
      &launch, "cuDNN backend-graph fused SDPA (causal, stats = lse) straight on the bf16 qkv and out");
  v.workspace = [](const Shape& s, const ParamValues&) { return cuda::sdpa::workspace_bound(s.B, s.T, s.NH); };
  return v;
}

}  // namespace wb::variants
