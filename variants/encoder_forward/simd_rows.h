#pragma once
// The rows of encoder_forward cpu/2 and encoder_forward_bf16 cpu/2, which differ only in
// their storage: E is float, or uint16_t for bf16 bits (lanes() of the tensors,
// device/cpu/bf16_lanes.h). Threads (`threads` of them) take contiguous runs of the B*T
// output rows; each row is one SIMD loop over three restrict-qualified contiguous
// streams, out[b, t] = wte[inp[b, t]] + wpe[t], each element widened (a bf16 by a shift),
// added in fp32 (exact for two bf16) and stored (a bf16 rounded once to nearest even by
// integer arithmetic, to_bf16's bits without its branches).
#include <cstdint>

#include "device/cpu/bf16_lanes.h"

namespace wb::cpu {

template <class E>
void encoder_rows_simd(E* out, const int32_t* inp, const E* wte, const E* wpe, int64_t B, int64_t T, int64_t C,
                       int threads) {
  const int64_t rows = B * T;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t bt = 0; bt < rows; ++bt) {
    const E* __restrict token_row = wte + int64_t(inp[bt]) * C;
    const E* __restrict position_row = wpe + (bt % T) * C;
    E* __restrict out_row = out + bt * C;
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) store(out_row[c], widen(token_row[c]) + widen(position_row[c]));
  }
}

}  // namespace wb::cpu
