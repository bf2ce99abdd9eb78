// layernorm_backward, CPU variant 2: one pass over the rows, dweight and dbias from
// per-block partial sums, SIMD loops.
//
// Idea: the rows are cut into blocks of 16; threads (`threads` of them) take whole
// blocks. For each row of its block a thread runs one SIMD loop over the C channels
// that both reduces the row's two means (of g = weight * dout and of g * n, n the
// normalised input) and adds n * dout and dout into the block's partial dweight and
// dbias (in the workspace), then a second loop that adds the row's dinp. Once every
// block is done, threads take tiles of 64 channels and add the partials of all blocks
// in block order, in double, into dweight and dbias.
// Why it should beat variant 1: the reference reads inp and dout twice, the second
// time down the columns (stride C, a cache line per element) to sum over rows; here
// each row is read once, contiguously, and the column sums come out of it.
// Determinism: the blocks are fixed by the shape, not by the thread count, and their
// partials are added in block order, so every thread count gives the same bits.
// Accuracy: a block's partials add 16 rows in float; blocks add in double.
// Limits: workspace of 2 C floats per block of rows (98 KB at B*T=256, C=768).
#include <algorithm>

#include "kernels/cpu/threads.h"
#include "kernels/ops/layernorm_backward.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

constexpr int64_t kRowBlock = 16;
constexpr int64_t kChannelTile = 64;

int64_t row_blocks(int64_t rows) { return (rows + kRowBlock - 1) / kRowBlock; }

void layernorm_backward_blocks(const LayernormBackwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, blocks = row_blocks(rows);
  float* partials = static_cast<float*>(l.workspace);  // (blocks, 2, C): dweight, then dbias
  const float* __restrict weight = a.weight;
#pragma omp parallel num_threads(cpu::threads(l))
  {
#pragma omp for schedule(static)
    for (int64_t block = 0; block < blocks; ++block) {
      float* __restrict dw = partials + block * 2 * C;
      float* __restrict db = dw + C;
      std::fill(dw, dw + 2 * C, 0.0f);
      const int64_t end = std::min(rows, (block + 1) * kRowBlock);
      for (int64_t row = block * kRowBlock; row < end; ++row) {
        const float* __restrict x = a.inp + row * C;
        const float* __restrict dout = a.dout + row * C;
        float* __restrict dinp = a.dinp + row * C;
        const float mean = a.mean[row], rstd = a.rstd[row];
        float g_sum = 0.0f, gn_sum = 0.0f;
#pragma omp simd reduction(+ : g_sum, gn_sum)
        for (int64_t c = 0; c < C; ++c) {
          const float n = (x[c] - mean) * rstd;
          const float g = weight[c] * dout[c];
          g_sum += g;
          gn_sum += g * n;
          dw[c] += n * dout[c];
          db[c] += dout[c];
        }
        const float g_mean = g_sum / float(C), gn_mean = gn_sum / float(C);
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) {
          const float n = (x[c] - mean) * rstd;
          const float g = weight[c] * dout[c];
          dinp[c] += (g - g_mean - n * gn_mean) * rstd;
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
      for (int64_t j = 0; j < width; ++j) {
        a.dweight[c0 + j] += float(dw[j]);
        a.dbias[c0 + j] += float(db[j]);
      }
    }
  }
}

}  // namespace

Variant layernorm_backward_cpu_2() {
  Variant v = Variant::of(&layernorm_backward_blocks);
  v.summary = "one SIMD pass per row for dinp and blocks' dweight/dbias partials, added in block order";
  v.params = {cpu::threads_param()};
  v.workspace = [](const Shape& s, const ParamValues&) {
    return std::size_t(row_blocks(s.B * s.T) * 2 * s.C) * sizeof(float);
  };
  return v;
}

}  // namespace wb::variants
