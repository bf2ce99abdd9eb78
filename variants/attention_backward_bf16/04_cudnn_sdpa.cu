// attention_backward_bf16, CUDA variant 4: cuDNN's fused scaled-dot-product-attention
// backward (its flash-attention backward engine), straight on the bf16 qkv, out, dout
// and dqkv.
//
// NEVER RUN ON A GPU: written and compiled (nvcc sm_80/sm_90) on a machine without
// one. The emulator runs it against its stand-in for cuDNN (device/cuda/cudnn_sdpa_emu.cpp:
// the graph's math on the host), which checks this file's views, strides and workspace
// but not cuDNN itself: its first `wb check` on a device is cuDNN's first test here.
//
// Idea: the backward graph of device/cuda/cudnn_sdpa.h (the pattern cuDNN's fused
// SDPA backward engine recognises, as cudnn-frontend's SDPA backward node expands it)
// on the views the forward uses: Q, K^T and V^T are strided views into the bf16 qkv
// (element offsets 0, C, 2C, row stride 3C), dQ, dK and dV the same views into dqkv,
// O and dO (B, NH, T, hs) views of out and dout, Stats the fp32 lse that
// attention_forward_bf16 wrote (cuDNN's own Stats: the natural-log log-sum-exp of the
// scaled causal scores). The engine recomputes P from Stats tile by tile, as variant
// 2 does; it also needs two fp32 buffers of ours: D = rowsum(dO * O) and the dQ
// accumulator, both in the workspace.
// Why it should beat variant 2: the five products (S, dP, dV, dK, dQ) run as bf16
// tensor-core matmuls with fp32 accumulation inside one vendor-tuned fused kernel
// (plus its small D and dQ-conversion passes), against variant 2's fp32 FMAs on CUDA
// cores over tiles widened to fp32 in shared memory (twice the bytes per tile).
// Numerics: the graph rounds P and dS to bf16 before the dV and dK products (their
// transposes are bf16 reshapes, the i/o type of cuDNN's matmuls; the engine's dS K for
// dQ is expected to do the same), and dQ is summed across key tiles in an fp32
// accumulator by float atomics, then rounded once: dqkv is not the one rounding of the
// fp32 sums the op's contract describes, so the bf16 numeric class and its tolerance.
// The atomics make the variant not deterministic. The backend API has no switch for
// it: cudnn-frontend's deterministic mode is another graph on Hopper (dS K written
// straight into dQ, no accumulator) and engine knobs on Blackwell; neither is done here.
// Limits: hs % 8 == 0 and hs <= 128 (as the forward; cuDNN's rule that also holds on
// sm_80), T >= 2 (cuDNN refuses s_q = s_kv = 1); qkv, out, dout, dqkv and the
// workspace 16-byte aligned (the graph declares 16-byte aligned tensors; otherwise
// skipped); cuDNN 9.10.0 and 9.10.1 are refused (known SDPA backward bugs, as
// cudnn-frontend refuses them). The workspace is the fp32 dQ accumulator (4 B*T*C
// bytes), D (4 B*NH*T bytes), then cuDNN's own, which is only known once the plan
// exists: declared with the forward's bound, and the launch fails with a clear message
// if a plan ever asks for more. Up to cuDNN 9.15.0 the engine can read out of bounds
// when T % 128 != 0 and it runs inside a CUDA graph replay (cudnn-frontend adds a
// padding mask of full lengths then): wb launches it directly, so this is not worked
// around. Cached plans live until the process ends.
#include <cstdint>
#include <string>

#include "base/errors.h"
#include "contract/ops/attention_backward.h"
#include "device/cuda/cudnn_sdpa.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

constexpr const char* kWho = "attention_backward_bf16 cuda/4";

void launch(const AttentionBackwardBf16Args& a, const Launch& l) {
  cuda::require_aligned16("attention_backward_bf16 cuda/4 (cuDNN tensors declared 16-byte aligned)",
                          {a.dqkv, a.dout, a.qkv, a.out, a.lse, l.workspace});
  const int version = cuda::sdpa::version();
  if (version == 91000 || version == 91001)
    throw Unsupported(std::string(kWho) + ": cuDNN " + std::to_string(version) +
                      " has known SDPA backward bugs (9.10.0 and 9.10.1; cudnn-frontend refuses them too)");
  const cudaStream_t stream = cuda::stream(l);
  const std::size_t total = cuda::sdpa::backward_workspace_bound(a.B, a.T, a.C, a.NH);
  const std::size_t cudnn_bound = cuda::sdpa::workspace_bound(a.B, a.T, a.NH);  // after the dQ accumulator and D
  if (l.workspace_bytes < total)
    throw BackendError(std::string(kWho) + ": " + std::to_string(l.workspace_bytes) + " bytes of workspace given, " +
                       std::to_string(total) + " declared");

  const cuda::sdpa::Handle handle = cuda::sdpa::handle(l);
  const cuda::sdpa::Plan& plan = cuda::sdpa::backward_plan_for(handle, stream, a.B, a.T, a.C, a.NH, cudnn_bound, kWho);

  // hs % 8 == 0, so C is a multiple of 8 and every view's base (+ C, + 2C) stays
  // 16-byte aligned; the workspace's parts start at multiples of 256 bytes.
  cuda::sdpa::execute_backward(handle, stream, plan, cuda::as_cuda(a.qkv), cuda::as_cuda(a.out), a.lse,
                               cuda::as_cuda(a.dout), cuda::as_cuda(a.dqkv), a.B, a.T, a.C, a.NH, l.workspace);
}

}  // namespace

Variant attention_backward_bf16_cuda_4() {
  Variant v = cuda::sdpa::rung<AttentionBackwardBf16Args>(
      &launch,
      "cuDNN backend-graph fused SDPA backward (causal, P recomputed from lse, fp32 dq accumulator by atomics) "
      "straight on the bf16 qkv, out, dout and dqkv");
  v.requirements.push_back({"T >= 2", [](const Shape& s) { return s.T >= 2; }});
  v.workspace = [](const Shape& s, const ParamValues&) {
    return cuda::sdpa::backward_workspace_bound(s.B, s.T, s.C, s.NH);
  };
  // dQ is summed over key tiles by fp32 atomics whose order varies
  v.deterministic = [](const ParamValues&) { return false; };
  return v;
}

}  // namespace wb::variants
