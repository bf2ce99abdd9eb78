#pragma once
// The measured ceilings of a device, against which every result is expressed as a
// percentage: copy bandwidth (a large copy, bytes read plus written) and matrix
// throughput (a large GEMM per numeric class: cuBLAS SGEMM, TF32 and BF16 GEMM on
// cuda; OpenBLAS sgemm and oneDNN's bf16 matmul on cpu). Zero means not measured.
//
// Memory: the roofline's bandwidth is memory_gbps where a report has it, else copy_gbps
// (reports written before the streams were measured). On cpu a plain copy is the slowest
// way to stream memory (every store first reads its line for ownership: the bus moves
// three bytes for the two a byte model counts), so an op that updates its arrays in place
// (adamw) or only reads them (global_norm) ran at 224% and 168% of a copy ceiling. The
// host therefore measures three streams -- read, copy, update in place -- on warm buffers
// larger than the last-level cache with the variants' thread count, and memory_gbps is
// the fastest of them (tools/bandwidth_probe.cpp is the experiment behind this).
//
// Absent: a ceiling that cannot be measured here is 0 and named in `absent` with the
// reason (a CPU without a bf16 matmul in oneDNN has no bf16 GEMM ceiling, a CPU no tf32
// one). Percentages use the ceilings that exist: a class without its own matrix ceiling
// is taken against fp32's, which is what its arithmetic runs on there.
#include <cstdint>
#include <map>
#include <string>

#include "contract/types.h"

namespace wb {

struct Ceilings {
  double copy_gbps = 0;
  double fp32_tflops = 0;
  double tf32_tflops = 0;
  double bf16_tflops = 0;
  // Optional (absent in older reports, 0 when not measured): the streams of the cpu
  // backend, counted as the ops' byte models count (bytes read plus bytes written).
  double read_gbps = 0;    // a read-only stream (a sum of squares: global_norm's pattern)
  double update_gbps = 0;  // read and write back in place (adamw's pattern)
  double memory_gbps = 0;  // the roofline's bandwidth: the fastest stream measured
  int64_t stream_bytes = 0;  // bytes per buffer of the streams (and of the copy)
  int threads = 0;           // threads that moved them (cpu: the variants' default)
  std::string method;  // how they were measured, in words
  // The ceilings that could not be measured here, by field name ("bf16_tflops"), with
  // the reason.
  std::map<std::string, std::string> absent;

  bool measured() const { return copy_gbps > 0; }
  // The bandwidth every percentage of the roofline is taken against.
  double bandwidth_gbps() const { return memory_gbps > 0 ? memory_gbps : copy_gbps; }
  double matmul_tflops(NumericClass c) const;  // the ceiling of a numeric class (0 when not measured)
  // Why the class has no matrix ceiling of its own here ("" when it has one, or fp32).
  std::string matmul_absent(NumericClass c) const;
};

// The field name of a class's matrix ceiling: "fp32_tflops", "tf32_tflops", "bf16_tflops".
std::string matmul_field(NumericClass c);

// Percentages of a result (GB/s and TFLOP/s of one record, in a numeric class).
struct PercentOfPeak {
  double copy = 0;      // GB/s against copy bandwidth
  double matmul = 0;    // TFLOP/s against the matrix ceiling of the class
  double roofline = 0;  // against min(copy bandwidth * flops/bytes, matrix ceiling)
};
PercentOfPeak percent_of_peak(const Ceilings& c, NumericClass numeric, double bytes, double flops, double seconds);

// A result above 100% of its roofline whose byte model exceeds the last-level cache (L2
// on cuda) cannot be: the data came from memory, so the ceiling was measured too low (or
// the byte model counts too much). Sweeps warn, reports flag the record
// ("above_ceiling") and plots mark it instead of drawing the bar. Below the cache size a
// result may beat a memory ceiling honestly (the data stays in cache between calls).
// llc_bytes <= 0 (unknown) never flags.
bool above_ceiling(double pct_of_roofline, double bytes, int64_t llc_bytes);

// The ceilings of two measurements of one device (a sweep measures again after records
// that took more than 30 s or of which one reads above the first measurement beyond the
// last-level cache): each rate the faster of the two, the sizes and thread count of
// `first`, the method of `first` with `how` appended; absent: what neither measured. A shared host's memory bandwidth
// drifts over the minutes a sweep takes (`wb device --backend cpu` twice, half an hour apart, can differ by half, and an
// op then reads above a ceiling taken at the start of its sweep): a ceiling is the fastest the machine was seen to go,
// so every measurement of it counts.
Ceilings faster_of(const Ceilings& first, const Ceilings& second, const std::string& how);

}  // namespace wb
