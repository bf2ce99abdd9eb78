#include "device/cpu/onednn.h"

#include <cstdlib>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "base/cpu_isa.h"
#include "base/errors.h"
#include "contract/cpu_capabilities.h"

namespace wb::cpu {
namespace {

// oneDNN's ISAs by name, for the line that says which kernels it runs here.
std::string isa_name(dnnl::cpu_isa isa) {
  using i = dnnl::cpu_isa;
  static const std::pair<dnnl::cpu_isa, const char*> kNames[] = {
      {i::all, "all"},
      {i::sse41, "sse41"},
      {i::avx, "avx"},
      {i::avx2, "avx2"},
      {i::avx2_vnni, "avx2_vnni"},
      {i::avx512_mic, "avx512_mic"},
      {i::avx512_mic_4ops, "avx512_mic_4ops"},
      {i::avx512_core, "avx512_core"},
      {i::avx512_core_vnni, "avx512_core_vnni"},
      {i::avx512_core_bf16, "avx512_core_bf16"},
      {i::avx512_core_amx, "avx512_core_amx"}};
  for (const auto& [value, name] : kNames)
    if (value == isa) return name;
  return "unknown (" + std::to_string(int(isa)) + ")";
}

// The oneDNN ISA that matches a wb level (the highest oneDNN generates within it).
dnnl::cpu_isa onednn_isa_of(IsaLevel level) {
  switch (level) {
    case IsaLevel::sse2:
      return dnnl::cpu_isa::sse41;  // oneDNN's lowest: below it, its reference code only
    case IsaLevel::avx2:
      return dnnl::cpu_isa::avx2;
    case IsaLevel::avx512:
      return dnnl::cpu_isa::avx512_core_vnni;
    case IsaLevel::avx512bf16:
      return dnnl::cpu_isa::avx512_core_bf16;
    case IsaLevel::amx:
      return dnnl::cpu_isa::all;
  }
  return dnnl::cpu_isa::all;
}

OneDnnInfo ask_onednn() {
  OneDnnInfo info;
  const dnnl_version_t* v = dnnl_version();
  info.version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  const char* env = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (!env || !*env) env = std::getenv("DNNL_MAX_CPU_ISA");
  if (env && *env) {
    info.cap = std::string("ONEDNN_MAX_CPU_ISA=") + env;  // oneDNN reads it at its first use
  } else if (isa().capped_below_cpu()) {
    // Before oneDNN's first use, or it keeps the ISA it found.
    const dnnl::status s = dnnl::set_max_cpu_isa(onednn_isa_of(*isa().cap));
    info.cap = "WB_CPU_ISA=" + std::string(to_string(*isa().cap)) +
               (s == dnnl::status::success ? "" : " (oneDNN refused the cap: it was used before)");
  }
  info.isa = isa_name(dnnl::get_effective_cpu_isa());
  try {
    using dt = dnnl::memory::data_type;
    const dnnl::memory::desc md({16, 16}, dt::bf16, dnnl::memory::format_tag::ab);
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), engine);
  } catch (const dnnl::error& e) {
    info.bf16_matmul_missing = "needs oneDNN's bf16 matmul, which oneDNN " + info.version +
                               " does not make for this CPU (its kernels here: " + info.isa +
                               (info.cap.empty() ? "" : ", capped by " + info.cap) + "; oneDNN says: " + e.what() + ")";
  }
  return info;
}

}  // namespace

std::string OneDnnInfo::describe() const {
  return "oneDNN " + version + ", kernels for " + isa + (cap.empty() ? "" : " (capped by " + cap + ")") +
         "; bf16 matmul: " + (bf16_matmul_missing ? "none" : "yes");
}

const OneDnnInfo& onednn_info() {
  static const OneDnnInfo info = ask_onednn();
  return info;
}

OneDnn& onednn() {
  onednn_info();
  static OneDnn instance;
  return instance;
}

void onednn_call(const char* what, const std::function<void()>& calls) {
  try {
    calls();
  } catch (const dnnl::error& e) {
    const std::string message = std::string("oneDNN ") + what + ": " + e.what();
    if (e.status == dnnl_unimplemented) throw Unsupported(message + " (not implemented for this CPU)");
    throw BackendError(message + " (status " + std::to_string(int(e.status)) + ")");
  }
}

void bf16_matmul(const bf16* src, dnnl::memory::format_tag src_tag, const bf16* weights,
                 dnnl::memory::format_tag weights_tag, const bf16* bias, void* dst, dnnl::memory::data_type dst_type,
                 dnnl::memory::dim M, dnnl::memory::dim K, dnnl::memory::dim N) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  onednn_call("bf16 matmul", [&] {
    OneDnn& d = onednn();
    const dnnl::memory::desc src_md({M, K}, dt::bf16, src_tag), weights_md({K, N}, dt::bf16, weights_tag),
        bias_md({1, N}, dt::bf16, tag::ab), dst_md({M, N}, dst_type, tag::ab);
    const dnnl::matmul::desc desc =
        bias ? dnnl::matmul::desc(src_md, weights_md, bias_md, dst_md) : dnnl::matmul::desc(src_md, weights_md, dst_md);
    const dnnl::matmul::primitive_desc pd(desc, d.engine);
    // oneDNN's memory objects take non-const handles; nothing writes src, weights or bias.
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, dnnl::memory(src_md, d.engine, const_cast<bf16*>(src))},
        {DNNL_ARG_WEIGHTS, dnnl::memory(weights_md, d.engine, const_cast<bf16*>(weights))},
        {DNNL_ARG_DST, dnnl::memory(dst_md, d.engine, dst)}};
    if (bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(bias_md, d.engine, const_cast<bf16*>(bias)));
    dnnl::matmul(pd).execute(d.stream, args);
    d.stream.wait();
  });
}

float* accumulator(const Launch& l, int64_t floats, const char* rung) {
  if (l.workspace_bytes < std::size_t(floats) * sizeof(float))
    throw std::logic_error(std::string(rung) + ": workspace too small for the fp32 accumulator");
  return static_cast<float*>(l.workspace);
}

std::optional<std::string> onednn_bf16_matmul_missing() { return onednn_info().bf16_matmul_missing; }

}  // namespace wb::cpu
