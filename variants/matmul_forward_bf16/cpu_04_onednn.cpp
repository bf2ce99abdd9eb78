// matmul_forward_bf16, CPU variant 4: oneDNN's bf16 matmul.
//
// Idea: one oneDNN matmul primitive: src inp (rows x C, bf16), weights (C x OC, the
// (OC, C) weight read transposed, bf16), bias (1 x OC, bf16), dst (rows x OC, bf16);
// oneDNN accumulates in fp32 and rounds each output once. On a CPU with AVX512-BF16
// it runs `vdpbf16ps` micro-kernels, two bf16 products per fp32 lane
// per instruction; on other AVX-512 CPUs it converts to fp32; Debian 12's oneDNN 2.6
// makes none for a CPU without AVX-512, where the rung is skipped with oneDNN's reason
// (device/cpu/onednn.h). The primitive is made from its
// descriptor on every call; oneDNN's primitive cache makes that a lookup after the
// first call at a shape. This is the library PyTorch's CPU bf16 matmuls run on.
// Why it should beat variant 3 (the hand-written vdpbf16ps GEMM): kernels generated for
// the CPU at run time, blocked along C, panels prefetched and packed with vector
// shuffles (variant 3's header has the command that measures both; figures in
// results/cpu-amd-epyc-avx512bf16/README.md). Against variant 2: no widening or
// rounding passes, half the bytes through
// the caches, and twice the multiply-adds per instruction of fp32 FMA.
// Limits: oneDNN's own threading (its OpenMP build on Debian, sharing wb's team); the
// engine and stream are made once per process.
#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "contract/cpu_capabilities.h"
#include "contract/ops/matmul_forward.h"
#include "contract/variant.h"
#include "device/cpu/onednn.h"

namespace wb::variants {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

void matmul_bf16_onednn(const MatmulForwardBf16Args& a, const Launch&) {
  cpu::OneDnn& d = cpu::onednn();
  const dnnl::memory::dim rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;
  const dnnl::memory::desc src_md({rows, C}, dt::bf16, tag::ab);
  const dnnl::memory::desc weights_md({C, OC}, dt::bf16, tag::ba);  // (OC, C) row-major, read as its transpose
  const dnnl::memory::desc dst_md({rows, OC}, dt::bf16, tag::ab);
  const dnnl::memory::desc bias_md({1, OC}, dt::bf16, tag::ab);
  const dnnl::matmul::desc desc =
      a.bias ? dnnl::matmul::desc(src_md, weights_md, bias_md, dst_md) : dnnl::matmul::desc(src_md, weights_md, dst_md);
  const dnnl::matmul::primitive_desc pd(desc, d.engine);
  dnnl::memory src(src_md, d.engine, const_cast<bf16*>(a.inp));
  dnnl::memory weights(weights_md, d.engine, const_cast<bf16*>(a.weight));
  dnnl::memory dst(dst_md, d.engine, a.out);
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (a.bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(bias_md, d.engine, const_cast<bf16*>(a.bias)));
  dnnl::matmul(pd).execute(d.stream, args);
  d.stream.wait();
}

void matmul_bf16_onednn_checked(const MatmulForwardBf16Args& a, const Launch& l) {
  cpu::onednn_call("bf16 matmul", [&] { matmul_bf16_onednn(a, l); });
}

}  // namespace

Variant matmul_forward_bf16_cpu_4() {
  Variant v = Variant::of(&matmul_bf16_onednn_checked);
  v.summary = "oneDNN bf16 matmul (fp32 accumulation, bias fused, one rounding): AVX512-BF16 where the CPU has it";
  v.requirements = {cpu::needs(cpu::Capability::onednn_bf16_matmul)};
  return v;
}

}  // namespace wb::variants
