#pragma once
// The run function of encoder_forward cpu/2 and encoder_forward_bf16 cpu/2, which differ
// only in their storage (Args: the op's argument struct of either): threads (`threads`
// of them) take contiguous runs of the B*T output rows; each row is one SIMD loop over
// three restrict-qualified contiguous streams, out = wte[token] + wpe[t], an element
// widened (a bf16 by a shift), added in fp32 (exact for two bf16) and stored (a bf16
// rounded once to nearest even by integer arithmetic: device/cpu/bf16_lanes.h).
#include <cstdint>

#include "device/cpu/bf16_lanes.h"
#include "device/cpu/threads.h"

namespace wb::cpu {

template <class Args>
void encoder_rows_simd(const Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C;
#pragma omp parallel for num_threads(threads(l)) schedule(static)
  for (int64_t bt = 0; bt < rows; ++bt) {
    const auto* __restrict wte = lanes(a.wte) + int64_t(a.inp[bt]) * C;
    const auto* __restrict wpe = lanes(a.wpe) + (bt % a.T) * C;
    auto* __restrict out = lanes(a.out) + bt * C;
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) store(out[c], widen(wte[c]) + widen(wpe[c]));
  }
}

}  // namespace wb::cpu
