// layernorm_backward_bf16, CPU variant 2: layernorm_backward cpu/2's row blocks on
// bf16 storage.
//
// Idea: the rows are cut into blocks of 16; threads (`threads` of them) take whole
// blocks. For each row of its block a thread runs one SIMD loop over the C channels
// that widens dout, inp (and weight) by shifts, reduces the row's two means in fp32
// (of g = weight * dout and of g * n, n the normalised input) and adds n * dout and dout
// into the block's fp32 partial dweight and dbias (in the workspace); a second loop
// rounds each dinp once from its old value widened plus the row's fp32 gradient. Once
// every block is done, threads take tiles of 64 channels, add the partials of all
// blocks in block order (in double), and round each dweight and dbias once from its
// old value widened plus that sum in fp32, as the contract says. Rounding by integer
// arithmetic (kernels/cpu/bf16_lanes.h).
// Why it should beat the reference port: the port runs double arithmetic element by
// element and reads inp and dout a second time down the columns (stride C) for
// dweight and dbias; here each row is read once, contiguously, in vector lanes.
// Determinism: the blocks are fixed by the shape, not by the thread count, and their
// partials are added in block order: every thread count gives the same bits.
// Accuracy: a block's partials add 16 rows in fp32; blocks add in double.
// Measured (2-core development machine, load average about 5 from other jobs, so on one
// thread, two interleaved runs, medians;
//   OMP_NUM_THREADS=1 build/wb run layernorm_backward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768
// with N = 1, 2 and the fp32 op's rung): port 4.7-4.8 ms, this rung 247-279 us,
// layernorm_backward cpu/2 (fp32) 124-142 us: 18x the port.
// Limits: workspace of 2 C floats per block of rows (98 KB at B*T=256, C=768).
#include <algorithm>

#include "kernels/cpu/bf16_lanes.h"
#include "kernels/cpu/threads.h"
#include "kernels/ops/layernorm_backward.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

constexpr int64_t kRowBlock = 16;
constexpr int64_t kChannelTile = 64;

int64_t row_blocks(int64_t rows) { return (rows + kRowBlock - 1) / kRowBlock; }

void layernorm_backward_bf16_blocks(const LayernormBackwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, blocks = row_blocks(rows);
  float* partials = static_cast<float*>(l.workspace);  // (blocks, 2, C): dweight, then dbias
  const uint16_t* __restrict weight = cpu::bits_of(a.weight);
#pragma omp parallel num_threads(cpu::threads(l))
  {
#pragma omp for schedule(static)
    for (int64_t block = 0; block < blocks; ++block) {
      float* __restrict dw = partials + block * 2 * C;
      float* __restrict db = dw + C;
      std::fill(dw, dw + 2 * C, 0.0f);
      const int64_t end = std::min(rows, (block + 1) * kRowBlock);
      for (int64_t row = block * kRowBlock; row < end; ++row) {
        const uint16_t* __restrict x = cpu::bits_of(a.inp) + row * C;
        const uint16_t* __restrict dout = cpu::bits_of(a.dout) + row * C;
        uint16_t* __restrict dinp = cpu::bits_of(a.dinp) + row * C;
        const float mean = a.mean[row], rstd = a.rstd[row];
        float g_sum = 0.0f, gn_sum = 0.0f;
#pragma omp simd reduction(+ : g_sum, gn_sum)
        for (int64_t c = 0; c < C; ++c) {
          const float d = cpu::widen(dout[c]);
          const float n = (cpu::widen(x[c]) - mean) * rstd;
          const float g = cpu::widen(weight[c]) * d;
          g_sum += g;
          gn_sum += g * n;
          dw[c] += n * d;
          db[c] += d;
        }
        const float g_mean = g_sum / float(C), gn_mean = gn_sum / float(C);
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) {
          const float n = (cpu::widen(x[c]) - mean) * rstd;
          const float g = cpu::widen(weight[c]) * cpu::widen(dout[c]);
          dinp[c] = cpu::round_bits(cpu::widen(dinp[c]) + (g - g_mean - n * gn_mean) * rstd);
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
      uint16_t* __restrict dweight = cpu::bits_of(a.dweight) + c0;
      uint16_t* __restrict dbias = cpu::bits_of(a.dbias) + c0;
      for (int64_t j = 0; j < width; ++j) {
        dweight[j] = cpu::round_bits(cpu::widen(dweight[j]) + float(dw[j]));
        dbias[j] = cpu::round_bits(cpu::widen(dbias[j]) + float(db[j]));
      }
    }
  }
}

}  // namespace

Variant layernorm_backward_bf16_cpu_2() {
  Variant v = Variant::of(&layernorm_backward_bf16_blocks);
  v.summary =
      "one fp32 SIMD pass per row (bf16 widened by shifts) for dinp and blocks' dweight/dbias partials, added in block "
      "order, each gradient rounded once";
  v.params = {cpu::threads_param()};
  v.workspace = [](const Shape& s, const ParamValues&) {
    return std::size_t(row_blocks(s.B * s.T) * 2 * s.C) * sizeof(float);
  };
  return v;
}

}  // namespace wb::variants
