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

}  // namespace wb::cpu
