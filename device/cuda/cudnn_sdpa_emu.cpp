// The emulator's cuDNN fused scaled-dot-product attention: what the graphs of
// device/cuda/cudnn_sdpa.h compute, on the host, with the roundings those graphs
// state, so that the SDPA rungs (their conversion kernels, views, strides and
// workspace layout) run under the emulator as the cuBLAS rungs do on OpenBLAS
// (emu/cublas.cpp). Before any arithmetic, every tensor a call reads or writes is
// checked to lie inside device memory and to start 16-byte aligned, as the graph
// declares it (a memcheck fault otherwise, sticky as a kernel's); a CUDA-graph capture
// records the call by value; while counting, the call is listed as a library call with
// its flops and the fewest bytes it moves.
//
// What it is not: cuDNN's engine. Its order of summation, its tiles and its float
// atomics into the dQ accumulator are not reproduced, only the roundings the graph
// specifies: P (and dS) to bf16 before the products that take them, O and dQ, dK, dV
// rounded once from fp32 sums. A rung passes here when its own code is right and the
// graph's math is within the bf16 class's tolerance; the device says whether cuDNN
// agrees (results/<device>/check/).
#if WB_EMU

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "device/cuda/cudnn_sdpa.h"
#include "device/cuda/runtime.h"

namespace wb::cuda::sdpa {
namespace {

constexpr std::uintptr_t kDeclaredAlignment = 16;

// Whether p starts at the 16 bytes the graph declares of every tensor it reads or writes
// (CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT in cudnn_sdpa.cpp; a pointer that breaks it is
// undefined there, cuDNN's vector loads assume it); a sticky memcheck fault naming the
// call and the tensor (or the view of one) when not.
bool aligned(const void* p, const char* call, const char* tensor) {
  if (reinterpret_cast<std::uintptr_t>(p) % kDeclaredAlignment == 0) return true;
  ::wb::emu::fault(::wb::emu::kMisalignedAddress, std::string("memcheck: ") + call + ": " + tensor +
                                                      " is not 16-byte aligned, as the graph declares it");
  return false;
}

// Whether [p, p + bytes) lies in one device allocation, aligned as declared; a sticky
// memcheck fault naming the call and the tensor when not.
bool inside(const void* p, std::size_t bytes, const char* call, const char* tensor) {
  if (bytes > 0 && !::wb::emu::in_device_memory(p, bytes)) {
    ::wb::emu::fault(::wb::emu::kIllegalAddress,
                     std::string("memcheck: ") + call + ": " + tensor + " reaches outside device memory");
    return false;
  }
  return aligned(p, call, tensor);
}

constexpr const char* kForward = "cuDNN SDPA forward (emulated)";
constexpr const char* kBackward = "cuDNN SDPA backward (emulated)";

// A call's work: nothing after a fault from before (as cuDNN on a context that lost its
// device) or while a LaunchPlan records (no work of ours to list: the library's kernels
// are not wb's); recorded by value in a CUDA-graph capture, to run at each replay; else
// run now.
template <class Run>
void run_or_record(const char* call, Run run) {
  if (::wb::emu::planning() || ::wb::emu::sticky_error() != 0) return;
  if (!::wb::emu::record(call, [run] {
        run();
        return ::wb::emu::sticky_error();
      }))
    run();
}

float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
float round_bf16(float x) { return __bfloat162float(__float2bfloat16(x)); }

// The element offsets of (b, t, channel) in the (B, T, 3C) qkv and the (B, T, C) o.
struct Views {
  int64_t T, C, NH, hs;
  int64_t qkv(int64_t b, int64_t t, int64_t part, int64_t h) const { return (b * T + t) * 3 * C + part * C + h * hs; }
  int64_t o(int64_t b, int64_t t, int64_t h) const { return (b * T + t) * C + h * hs; }
  int64_t row(int64_t b, int64_t h, int64_t t) const { return (b * NH + h) * T + t; }
};

// The causal pairs (t, j <= t) of one head: T (T + 1) / 2 of each product's hs-deep dots.
double causal_pairs(int64_t T) { return double(T) * double(T + 1) / 2; }

void forward(const Plan& plan, const __nv_bfloat16* qkv, __nv_bfloat16* o, float* lse, int hs) {
  const char* call = kForward;
  const int64_t B = plan.B, T = plan.T, C = plan.C, NH = plan.NH;
  const std::size_t btc = std::size_t(B * T * C);
  if (!inside(qkv, 3 * btc * sizeof(__nv_bfloat16), call, "qkv (Q, K and V)") ||
      !aligned(qkv + C, call, "K (qkv + C)") || !aligned(qkv + 2 * C, call, "V (qkv + 2C)") ||
      !inside(o, btc * sizeof(__nv_bfloat16), call, "O") ||
      !inside(lse, std::size_t(B * NH * T) * sizeof(float), call, "Stats (lse)"))
    return;
  // S, P V: two hs-deep products over the causal pairs; qkv read, O and Stats written.
  const double flops = 4.0 * double(hs) * causal_pairs(T) * double(B * NH);
  const double bytes = double(4 * btc) * sizeof(__nv_bfloat16) + double(B * NH * T) * sizeof(float);
  if (!::wb::emu::count_library_call(call, flops, bytes)) return;  // counting sampled blocks: nothing validated

  const Views v{T, C, NH, hs};
  const float scale = 1.0f / std::sqrt(float(hs));
  std::vector<float> s(static_cast<std::size_t>(T)), acc(static_cast<std::size_t>(hs));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < NH; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const __nv_bfloat16* q = qkv + v.qkv(b, t, 0, h);
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j <= t; ++j) {  // S = Q K^T (fp32), S *= scale; j > t masked
          const __nv_bfloat16* k = qkv + v.qkv(b, j, 1, h);
          float dot = 0;
          for (int64_t d = 0; d < hs; ++d) dot += widen(q[d]) * widen(k[d]);
          s[std::size_t(j)] = dot * scale;
          m = std::max(m, s[std::size_t(j)]);
        }
        float z = 0;
        for (int64_t j = 0; j <= t; ++j) z += (s[std::size_t(j)] = std::exp(s[std::size_t(j)] - m));
        lse[v.row(b, h, t)] = m + std::log(z);
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t j = 0; j <= t; ++j) {  // O = P V, P rounded to bf16 first
          const float p = round_bf16(s[std::size_t(j)] / z);
          const __nv_bfloat16* val = qkv + v.qkv(b, j, 2, h);
          for (int64_t d = 0; d < hs; ++d) acc[std::size_t(d)] += p * widen(val[d]);
        }
        for (int64_t d = 0; d < hs; ++d) o[v.o(b, t, h) + d] = __float2bfloat16(acc[std::size_t(d)]);
      }
}

void backward(const Plan& plan, const __nv_bfloat16* qkv, const __nv_bfloat16* out, const float* lse,
              const __nv_bfloat16* dout, __nv_bfloat16* dqkv, void* workspace) {
  const char* call = kBackward;
  const int64_t B = plan.B, T = plan.T, C = plan.C, NH = plan.NH, hs = C / NH;
  const std::size_t btc = std::size_t(B * T * C), rows = std::size_t(B * NH * T);
  auto* bytes = static_cast<unsigned char*>(workspace);
  auto* dq_acc = reinterpret_cast<float*>(bytes);
  auto* row_sum = reinterpret_cast<float*>(bytes + dq_accumulator_bytes(B, T, C));
  if (!inside(qkv, 3 * btc * sizeof(__nv_bfloat16), call, "qkv (Q, K^T and V^T)") ||
      !aligned(qkv + C, call, "K^T (qkv + C)") || !aligned(qkv + 2 * C, call, "V^T (qkv + 2C)") ||
      !inside(out, btc * sizeof(__nv_bfloat16), call, "O") || !inside(lse, rows * sizeof(float), call, "Stats (lse)") ||
      !inside(dout, btc * sizeof(__nv_bfloat16), call, "dO") ||
      !inside(dqkv, 3 * btc * sizeof(__nv_bfloat16), call, "dqkv (dQ, dK and dV)") ||
      !aligned(dqkv + C, call, "dK (dqkv + C)") || !aligned(dqkv + 2 * C, call, "dV (dqkv + 2C)") ||
      !inside(dq_acc, btc * sizeof(float), call, "the dQ accumulator (the workspace's first part)") ||
      !inside(row_sum, rows * sizeof(float), call, "D, the row sums of dO * O (the workspace's second part)"))
    return;
  // S again, dP, dV, dK, dQ: five hs-deep products over the causal pairs. Read: qkv, O,
  // dO, Stats; written: dqkv, D; the dQ accumulator written and read once.
  const double flops = 10.0 * double(hs) * causal_pairs(T) * double(B * NH);
  const double moved =
      double(6 * btc + 2 * btc + 2 * btc) * sizeof(__nv_bfloat16) + double(2 * rows + 2 * btc) * sizeof(float);
  if (!::wb::emu::count_library_call(call, flops, moved)) return;

  const Views v{T, C, NH, hs};
  const float scale = 1.0f / std::sqrt(float(hs));
  std::vector<float> p(static_cast<std::size_t>(T * T)), ds(static_cast<std::size_t>(T * T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < NH; ++h) {
      for (int64_t t = 0; t < T; ++t) {
        const __nv_bfloat16* q = qkv + v.qkv(b, t, 0, h);
        const __nv_bfloat16* o = out + v.o(b, t, h);
        const __nv_bfloat16* g = dout + v.o(b, t, h);
        float d_row = 0;  // D = sum over hs of dO * O
        for (int64_t d = 0; d < hs; ++d) d_row += widen(g[d]) * widen(o[d]);
        row_sum[v.row(b, h, t)] = d_row;
        for (int64_t j = 0; j <= t; ++j) {
          const __nv_bfloat16* k = qkv + v.qkv(b, j, 1, h);
          const __nv_bfloat16* val = qkv + v.qkv(b, j, 2, h);
          float dot = 0, dp = 0;
          for (int64_t d = 0; d < hs; ++d) dot += widen(q[d]) * widen(k[d]);
          for (int64_t d = 0; d < hs; ++d) dp += widen(g[d]) * widen(val[d]);  // dP = dO V^T
          const float pr = std::exp(dot * scale - lse[v.row(b, h, t)]);        // P from Stats, fp32
          p[std::size_t(t * T + j)] = pr;
          ds[std::size_t(t * T + j)] = (dp - d_row) * pr * scale;
        }
      }
      for (int64_t d = 0; d < hs; ++d) {
        for (int64_t j = 0; j < T; ++j) {  // dV = P^T dO, dK = dS^T Q: bf16 P and dS
          float dv = 0, dk = 0;
          for (int64_t t = j; t < T; ++t) {
            dv += round_bf16(p[std::size_t(t * T + j)]) * widen(dout[v.o(b, t, h) + d]);
            dk += round_bf16(ds[std::size_t(t * T + j)]) * widen(qkv[v.qkv(b, t, 0, h) + d]);
          }
          dqkv[v.qkv(b, j, 2, h) + d] = __float2bfloat16(dv);
          dqkv[v.qkv(b, j, 1, h) + d] = __float2bfloat16(dk);
        }
        for (int64_t t = 0; t < T; ++t) {  // dQ = dS K into the fp32 accumulator, then rounded once
          float dq = 0;
          for (int64_t j = 0; j <= t; ++j)
            dq += round_bf16(ds[std::size_t(t * T + j)]) * widen(qkv[v.qkv(b, j, 1, h) + d]);
          const int64_t at = v.row(b, h, t) * hs + d;  // (B, NH, T, hs), packed
          dq_acc[at] = dq;
          dqkv[v.qkv(b, t, 0, h) + d] = __float2bfloat16(dq_acc[at]);
        }
      }
    }
}

// The plan for a shape: the shape itself, needing none of cuDNN's own workspace (so
// any room will do). One per thread, valid until its next plan; a captured call keeps
// a copy.
const Plan& plan_of(int B, int T, int C, int NH) {
  thread_local Plan plan;
  plan = Plan{B, T, C, NH, 0};
  return plan;
}

}  // namespace

Handle handle(const Launch& launch) { return stream(launch); }

int version() { return 0; }

const Plan& plan_for(Handle, cudaStream_t, int B, int T, int C, int NH, std::size_t, const char*) {
  return plan_of(B, T, C, NH);
}

const Plan& backward_plan_for(Handle, cudaStream_t, int B, int T, int C, int NH, std::size_t, const char*) {
  return plan_of(B, T, C, NH);
}

void execute(Handle, const Plan& plan, const __nv_bfloat16* qkv, __nv_bfloat16* o, float* lse, int, int hs, void*) {
  run_or_record(kForward, [plan, qkv, o, lse, hs] { forward(plan, qkv, o, lse, hs); });
}

void execute_backward(Handle, cudaStream_t, const Plan& plan, const __nv_bfloat16* qkv, const __nv_bfloat16* out,
                      const float* lse, const __nv_bfloat16* dout, __nv_bfloat16* dqkv, int, int, int, int,
                      void* workspace) {
  run_or_record(kBackward,
                [plan, qkv, out, lse, dout, dqkv, workspace] { backward(plan, qkv, out, lse, dout, dqkv, workspace); });
}

}  // namespace wb::cuda::sdpa

#endif  // WB_EMU
