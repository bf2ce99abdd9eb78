#pragma once
// The row-block layernorm backward of layernorm_backward cpu/2 (fp32 storage) and
// layernorm_backward_bf16 cpu/2 (bf16 storage), templated on the argument struct: the
// storage of inp, dout, weight and the gradients is float or bf16 (read as its bits and
// widened by shifts, device/cpu/bf16_lanes.h); every product and sum is fp32 (the
// final sums over blocks double).
//
// Blocks of kRowBlock rows over threads. For each row, one SIMD loop reduces the row's
// two means (of g = weight * dout and of g * n, n the normalised input) and adds n * dout
// and dout into the block's fp32 partial dweight and dbias (in the workspace); a second
// loop adds the row's gradient into dinp (on bf16 rounded once from the old value
// widened plus the fp32 gradient). Once every block is done, threads take tiles of
// kChannelTile channels, add the partials of all blocks in block order, in double, and
// add that sum into dweight and dbias (rounded once on bf16). Deterministic: every thread
// count gives the same bits.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "contract/shape.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/threads.h"

namespace wb::cpu::layernorm_backward {

constexpr int64_t kRowBlock = 16;
constexpr int64_t kChannelTile = 64;

inline int64_t row_blocks(int64_t rows) { return (rows + kRowBlock - 1) / kRowBlock; }

// The workspace: (blocks, 2, C) floats, a block's partial dweight then dbias.
inline std::size_t workspace_bytes(const Shape& s) {
  return std::size_t(row_blocks(s.B * s.T) * 2 * s.C) * sizeof(float);
}

template <class Args>
void row_blocks_backward(const Args& a, const Launch& l) {
  // float, or uint16_t for bf16 bits
  using E = std::remove_const_t<std::remove_pointer_t<decltype(lanes(a.inp))>>;
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, blocks = row_blocks(rows);
  float* partials = static_cast<float*>(l.workspace);  // (blocks, 2, C): dweight, then dbias
  const E* __restrict weight = lanes(a.weight);
#pragma omp parallel num_threads(threads(l))
  {
#pragma omp for schedule(static)
    for (int64_t block = 0; block < blocks; ++block) {
      float* __restrict dw = partials + block * 2 * C;
      float* __restrict db = dw + C;
      std::fill(dw, dw + 2 * C, 0.0f);
      const int64_t end = std::min(rows, (block + 1) * kRowBlock);
      for (int64_t row = block * kRowBlock; row < end; ++row) {
        const E* __restrict x = lanes(a.inp) + row * C;
        const E* __restrict dout = lanes(a.dout) + row * C;
        E* __restrict dinp = lanes(a.dinp) + row * C;
        const float mean = a.mean[row], rstd = a.rstd[row];
        float g_sum = 0.0f, gn_sum = 0.0f;
#pragma omp simd reduction(+ : g_sum, gn_sum)
        for (int64_t c = 0; c < C; ++c) {
          const float d = widen(dout[c]);
          const float n = (widen(x[c]) - mean) * rstd;
          const float g = widen(weight[c]) * d;
          g_sum += g;
          gn_sum += g * n;
          dw[c] += n * d;
          db[c] += d;
        }
        const float g_mean = g_sum / float(C), gn_mean = gn_sum / float(C);
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) {
          const float n = (widen(x[c]) - mean) * rstd;
          const float g = widen(weight[c]) * widen(dout[c]);
          add_into(dinp[c], (g - g_mean - n * gn_mean) * rstd);
        }
      }
    }
    // (the implicit barrier of the loop above: every partial is complete)
#pragma omp for schedule(static)
    for (int64_t c0 = 0; c0 < C; c0 += kChannelTile) {
      const int64_t width = std::min(kChannelTile, C - c0);
      double dw[kChannelTile] = {}, db[kChannelTile] = {};
      for (int64_t block = 0; block < blocks; ++block) {
        const float* __restrict pw = partials + block * 2 * C + c0;
        const float* __restrict pb = pw + C;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j) {
          dw[j] += pw[j];
          db[j] += pb[j];
        }
      }
      E* __restrict dweight = lanes(a.dweight) + c0;
      E* __restrict dbias = lanes(a.dbias) + c0;
      for (int64_t j = 0; j < width; ++j) {
        add_into(dweight[j], float(dw[j]));
        add_into(dbias[j], float(db[j]));
      }
    }
  }
}

}  // namespace wb::cpu::layernorm_backward
