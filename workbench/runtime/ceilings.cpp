#include "workbench/runtime/ceilings.h"

#include <algorithm>

namespace wb {

double Ceilings::matmul_tflops(NumericClass c) const {
  switch (c) {
    case NumericClass::fp32:
      return fp32_tflops;
    case NumericClass::tf32:
      return tf32_tflops > 0 ? tf32_tflops : fp32_tflops;
    case NumericClass::bf16:
      return bf16_tflops > 0 ? bf16_tflops : fp32_tflops;
  }
  return fp32_tflops;
}

std::string matmul_field(NumericClass c) { return std::string(to_string(c)) + "_tflops"; }

std::string Ceilings::matmul_absent(NumericClass c) const {
  if (c == NumericClass::fp32) return "";
  const auto it = absent.find(matmul_field(c));
  return it == absent.end() ? "" : it->second;
}

PercentOfPeak percent_of_peak(const Ceilings& c, NumericClass numeric, double bytes, double flops, double seconds) {
  PercentOfPeak p;
  if (seconds <= 0) return p;
  const double gbps = bytes / seconds * 1e-9;
  const double tflops = flops / seconds * 1e-12;
  const double matmul = c.matmul_tflops(numeric);
  const double bandwidth = c.bandwidth_gbps();
  if (c.copy_gbps > 0) p.copy = 100 * gbps / c.copy_gbps;
  if (matmul > 0) p.matmul = 100 * tflops / matmul;
  if (bandwidth > 0 && matmul > 0 && bytes > 0) {
    // The roofline: the time the op needs at least, bound by memory or by math.
    const double floor_s = std::max(bytes / (bandwidth * 1e9), flops / (matmul * 1e12));
    p.roofline = 100 * floor_s / seconds;
  }
  return p;
}

bool above_ceiling(double pct_of_roofline, double bytes, int64_t llc_bytes) {
  return llc_bytes > 0 && bytes > double(llc_bytes) && pct_of_roofline > 100;
}

Ceilings faster_of(const Ceilings& first, const Ceilings& second, const std::string& how) {
  Ceilings c = first;
  for (double Ceilings::*rate : {&Ceilings::copy_gbps, &Ceilings::fp32_tflops, &Ceilings::tf32_tflops,
                                 &Ceilings::bf16_tflops, &Ceilings::read_gbps, &Ceilings::update_gbps,
                                 &Ceilings::memory_gbps})
    c.*rate = std::max(first.*rate, second.*rate);
  c.method = first.method + how;
  c.absent.clear();
  for (const auto& [field, why] : first.absent)
    if (second.absent.count(field)) c.absent[field] = why;
  return c;
}

}  // namespace wb
