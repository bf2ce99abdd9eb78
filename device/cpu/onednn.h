#pragma once
// oneDNN for the CPU rungs built on it: what it can do on this CPU (asked once), the
// engine and stream they share (made once per process: oneDNN's primitive cache then
// makes a primitive built per call a lookup), and the one way a rung calls it.
//
// What oneDNN can do depends on the CPU and on the library's build: Debian 12's oneDNN
// 2.6 makes bf16 matmul primitives only for CPUs with AVX-512 (AVX512-BF16 natively,
// AVX-512 F/BW/VL by conversion); on an AVX2 CPU creating one fails ("could not create a
// primitive descriptor iterator"). So the rungs state the capability
// (cpu::Capability::onednn_bf16_matmul, contract/cpu_capabilities.h), whose answer is
// oneDNN's own: a bf16 matmul descriptor made once, here.
//
// The cap: oneDNN honours ONEDNN_MAX_CPU_ISA itself; when only WB_CPU_ISA is set, the
// first use here caps oneDNN to the same level (dnnl::set_max_cpu_isa), so that its
// kernels and its answer follow the capped CPU.
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <utility>

#include "base/bf16.h"
#include "contract/cpu_capabilities.h"
#include "device/cpu/threads.h"

namespace wb::cpu {

struct OneDnnInfo {
  std::string version;  // "2.6.3"
  std::string isa;      // what its kernels are generated for here: "avx512_core_bf16", "avx2"
  std::string cap;      // how it is capped: "ONEDNN_MAX_CPU_ISA=AVX2", "WB_CPU_ISA=avx2", "" (not)
  // Why it makes no bf16 matmul here, or nullopt when it does.
  std::optional<std::string> bf16_matmul_missing;
  std::string describe() const;  // "oneDNN 2.6.3, kernels for avx512_core_bf16; bf16 matmul: yes"
};

// Asked at the first call (after the cap is applied); never throws.
const OneDnnInfo& onednn_info();

struct OneDnn {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

// The engine and stream, made at the first call (after onednn_info()).
OneDnn& onednn();

// Runs a rung's oneDNN calls: a primitive oneDNN does not implement here
// (dnnl_unimplemented) is the rung's wb::Unsupported (skipped, with oneDNN's message);
// any other oneDNN error is a failed call (wb::BackendError), the rung's failure. Never
// the process's internal error.
void onednn_call(const char* what, const std::function<void()>& calls);

// The bf16 matmul of the rungs built on oneDNN, one primitive through onednn_call:
//   dst (M x N) = src (M x K) @ weights (K x N) [+ bias (1 x N), where bias is not null]
// src, weights and bias bf16, dst of dst_type (bf16: each output rounded once by oneDNN;
// f32: its fp32 accumulator); src_tag and weights_tag say how each is stored (ab:
// row-major; ba: its transpose stored row-major, read transposed), bias and dst
// row-major. oneDNN accumulates in fp32 (AVX512-BF16's `vdpbf16ps` where the CPU has
// it). The primitive is made from its descriptor on every call (oneDNN's primitive
// cache makes that a lookup after the first call at a shape); returns when it is done.
void bf16_matmul(const bf16* src, dnnl::memory::format_tag src_tag, const bf16* weights,
                 dnnl::memory::format_tag weights_tag, const bf16* bias, void* dst, dnnl::memory::data_type dst_type,
                 dnnl::memory::dim M, dnnl::memory::dim K, dnnl::memory::dim N);

// The rungs whose bf16_matmul writes an fp32 accumulator in their workspace
// (matmul_backward_bf16 cpu/3, matmul_gelu_forward_bf16 cpu/2):
//   threaded_onednn_bf16(run, summary, floats)  the description: threaded()'s, with
//       oneDNN's bf16 matmul as its requirement (a CPU where oneDNN makes none, no
//       AVX-512 for Debian 12's oneDNN 2.6, skips it with the reason) and a workspace
//       of floats(shape) floats
//   accumulator(l, floats, rung)  that workspace in the run, checked to hold `floats`
//       (a std::logic_error naming the rung if not)
template <class Args>
Variant threaded_onednn_bf16(void (*run)(const Args&, const Launch&), std::string summary,
                             int64_t (*floats)(const Shape&)) {
  Variant v = threaded(run, std::move(summary));
  v.requirements = {needs(Capability::onednn_bf16_matmul)};
  v.workspace = [floats](const Shape& s, const ParamValues&) { return std::size_t(floats(s)) * sizeof(float); };
  return v;
}

float* accumulator(const Launch& l, int64_t floats, const char* rung);

}  // namespace wb::cpu
