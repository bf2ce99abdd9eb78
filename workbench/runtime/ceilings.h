#pragma once
// The measured ceilings of a device, against which every result is expressed as a
// percentage: copy bandwidth (a large copy, bytes read plus written) and matrix
// throughput (a large GEMM per numeric class: cuBLAS SGEMM, TF32 and BF16 GEMM on
// cuda; OpenBLAS sgemm and oneDNN's bf16 matmul on cpu). Zero means not measured.
#include <string>

#include "kernels/types.h"

namespace wb {

struct Ceilings {
  double copy_gbps = 0;
  double fp32_tflops = 0;
  double tf32_tflops = 0;
  double bf16_tflops = 0;
  std::string method;  // how they were measured, in words

  bool measured() const { return copy_gbps > 0; }
  double matmul_tflops(NumericClass c) const;  // the ceiling of a numeric class (0 when not measured)
};

// Percentages of a result (GB/s and TFLOP/s of one record, in a numeric class).
struct PercentOfPeak {
  double copy = 0;      // GB/s against copy bandwidth
  double matmul = 0;    // TFLOP/s against the matrix ceiling of the class
  double roofline = 0;  // against min(copy bandwidth * flops/bytes, matrix ceiling)
};
PercentOfPeak percent_of_peak(const Ceilings& c, NumericClass numeric, double bytes, double flops, double seconds);

}  // namespace wb
