#pragma once
// cuDNN's fused scaled-dot-product attention on bf16 Q, K, V and O, the causal
// attention of attention_forward cuda/5 (fp32 storage, converted to and from bf16 in
// its workspace) and attention_forward_bf16 cuda/3 (bf16 storage, read and written in
// place), and its backward for attention_backward_bf16 cuda/4, built through the
// cuDNN 9 backend (graph) API.
//
// Tensors (element strides; qkv is the fused (B, T, 3C) bf16 input, O the (B, T, C)
// bf16 output):
//   Q, V   (B, NH, T, hs)  strides (3CT, hs, 3C, 1), at element offsets 0 and 2C of qkv
//   K^T    (B, NH, hs, T)  strides (3CT, hs, 1, 3C), at element offset C
//   O      (B, NH, T, hs)  strides (TC, hs, C, 1)
//   Stats  (B, NH, T, 1)   fp32, the layout of lse
// The operation graph is the SDPA pattern the engine recognises:
//   S = Q K^T (fp32 accumulate); S *= scale (by-value scalar 1/sqrt(hs));
//   causal mask: row = gen_index(S, axis 2), col = gen_index(S, axis 3),
//     keep = row >= col, S = keep ? S : -inf (binary select);
//   softmax: m = max over keys, e = exp(S - m), z = sum of e,
//     Stats = m + log(z), P = e / z (bf16);  O = P V (bf16).
// Stats is therefore exactly lse: the natural-log log-sum-exp of the scaled, masked
// scores. P is rounded to bf16 before P V (the bf16 numeric class).
//
// The backward graph (build_backward_graph) is the pattern of cuDNN's fused SDPA
// backward engine; besides the forward's tensors it reads dO (the layout of O) and
// V^T (B, NH, hs, T) (strides (3CT, hs, 1, 3C), offset 2C), and writes dQ, dK, dV in
// the layout of Q (offsets 0, C, 2C of the (B, T, 3C) dqkv). Two more non-virtual
// fp32 tensors live in the caller's workspace: D (B, NH, T, 1), the row sums of
// dO * O, and the dQ accumulator (B, NH, T, hs), packed, which the engine fills by
// float atomics and converts into dQ. In order:
//   D = sum over hs of (dO * O), times 1 (the by-value scalar `one`);
//   S = Q K^T; S *= scale; S -= Stats; causal mask; P = exp(S) (fp32, never stored);
//   dV = P^T dO (P^T a bf16 reshape of P);
//   dP = dO V^T; dS = (dP - D) * P * scale (fp32);
//   dK = dS^T Q (dS^T a bf16 reshape of dS);
//   dQacc = dS K (K a reshape of K^T, fp32 out); dQ = identity(dQacc) (bf16).
//
// The graphs, the engine choice (heuristics mode A, then fallback) and the finalised
// execution plans are built once per device, stream, handle and shape and cached, one
// cache per direction (the plan owns compiled kernels; building it can take a while,
// running it does not). Every tensor is declared 16-byte aligned: qkv, qkv + C and O
// must be (and dqkv, dout and the workspace for the backward).
// cuDNN's own workspace is only known once the plan exists: workspace_bound gives the
// bound a variant reserves for it.
//
// The graphs' construction, the plan caches and the execution live once, in
// cudnn_sdpa.cpp (compiled where cuDNN is): this header holds what a variant calls.
// Under the emulator the same calls run cudnn_sdpa_emu.cpp instead: the graphs' math
// on the host, as this header states it, after checking every tensor and the
// workspace against device memory (emu/README.md, "library numerics").
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#if !WB_EMU
#include <cudnn.h>
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contract/variant.h"

namespace wb::cuda::sdpa {

constexpr int kMaxHeadSize = 128;  // cuDNN's head-size rule that also holds on sm_80 (with hs % 8 == 0)
// Bound for cuDNN's own workspace: 64 MiB plus 16 bytes per (b, h, t) row.
constexpr std::size_t kCudnnFixedBound = std::size_t(64) << 20;
constexpr std::size_t kCudnnPerRowBound = 16;

inline std::size_t workspace_bound(int64_t B, int64_t T, int64_t NH) {
  return kCudnnFixedBound + kCudnnPerRowBound * std::size_t(B) * NH * T;
}

// The backward's workspace, in this order: the fp32 dQ accumulator (B*T*C floats), the
// fp32 row sums D (B*NH*T floats), each rounded up to 256 bytes, then cuDNN's own (the
// forward's bound).
constexpr std::size_t kWorkspaceAlignment = 256;
inline std::size_t round_up(std::size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}
inline std::size_t dq_accumulator_bytes(int64_t B, int64_t T, int64_t C) {
  return round_up(sizeof(float) * std::size_t(B) * T * C);
}
inline std::size_t row_sum_bytes(int64_t B, int64_t T, int64_t NH) {
  return round_up(sizeof(float) * std::size_t(B) * NH * T);
}
inline std::size_t backward_workspace_bound(int64_t B, int64_t T, int64_t C, int64_t NH) {
  return dq_accumulator_bytes(B, T, C) + row_sum_bytes(B, T, NH) + workspace_bound(B, T, NH);
}

// What every SDPA rung requires of the shape: a head size that is a multiple of 8 (so
// that C is, and the views of qkv at C and 2C stay 16-byte aligned) and at most
// kMaxHeadSize.
inline std::vector<Requirement> head_size_requirements() {
  return {{"C / NH % 8 == 0", [](const Shape& s) { return s.NH > 0 && (s.C / s.NH) % 8 == 0; }},
          {"C / NH <= " + std::to_string(kMaxHeadSize),
           [](const Shape& s) { return s.NH > 0 && s.C / s.NH <= kMaxHeadSize; }}};
}

// An SDPA rung's Variant, in the bf16 numeric class (the graphs round P, and dS, to
// bf16 before their products), with head_size_requirements. The emulator runs it
// (cudnn_sdpa_emu.cpp), so unlike library_rung's it names no library it lacks.
template <class Args>
Variant rung(void (*launch)(const Args&, const Launch&), std::string summary) {
  Variant v = Variant::of<Args>(launch);
  v.summary = std::move(summary);
  v.numeric = NumericClass::bf16;
  v.requirements = head_size_requirements();
  return v;
}

#if WB_EMU

// The emulator's cuDNN keeps no state but the stream, and its plans no compiled kernels:
// a plan is the shape it was asked for, and it needs none of cuDNN's own workspace.
using Handle = cudaStream_t;
struct Plan {
  int B = 0, T = 0, C = 0, NH = 0;
  int64_t workspace = 0;  // cuDNN's own, in bytes
};

#else

using Handle = cudnnHandle_t;
class Descriptor;  // an owned cuDNN backend descriptor (cudnn_sdpa.cpp)

// A finalised execution plan and everything it was built from.
struct Plan {
  Plan();
  ~Plan();
  std::vector<std::unique_ptr<Descriptor>> owned;
  cudnnBackendDescriptor_t plan = nullptr;
  int64_t workspace = 0;  // cuDNN's own, in bytes
};

#endif

// The launch's cuDNN handle, bound to the launch's stream.
Handle handle(const Launch& launch);
// cudnnGetVersion() (91000 for 9.10.0); 0 under the emulator.
int version();

// The cached plans, built on first use for (device, stream, handle, shape). `room` is
// the workspace the variant has for cuDNN's own (at most the bound it declared for it,
// workspace_bound). `who` names the variant in the errors thrown: Unsupported when
// cuDNN has no engine for the graph, BackendError when the plan needs more than `room`.
const Plan& plan_for(Handle handle, cudaStream_t stream, int B, int T, int C, int NH, std::size_t room,
                     const char* who);
const Plan& backward_plan_for(Handle handle, cudaStream_t stream, int B, int T, int C, int NH, std::size_t room,
                              const char* who);

// Runs the plan on the stream `handle` is bound to: Q, K and V are strided views of
// the bf16 qkv (B, T, 3C) at element offsets 0, C and 2C; O is written as bf16 in the
// (B, T, C) layout, Stats as fp32 into lse (B, NH, T); `workspace` holds at least
// plan.workspace bytes. The scale and the masked value are passed by value.
void execute(Handle handle, const Plan& plan, const __nv_bfloat16* qkv, __nv_bfloat16* o, float* lse, int C, int hs,
             void* workspace);

// Runs a backward plan on `stream`, the stream `handle` is bound to: qkv, out and
// lse as the forward read and wrote them, dout (B, T, C), dqkv (B, T, 3C) written
// whole (dQ, dK, dV at element offsets 0, C and 2C). `workspace` holds
// backward_workspace_bound bytes laid out as that function says (the dQ accumulator,
// D, then at least plan.workspace bytes of cuDNN's own).
void execute_backward(Handle handle, cudaStream_t stream, const Plan& plan, const __nv_bfloat16* qkv,
                      const __nv_bfloat16* out, const float* lse, const __nv_bfloat16* dout, __nv_bfloat16* dqkv, int B,
                      int T, int C, int NH, void* workspace);

}  // namespace wb::cuda::sdpa
