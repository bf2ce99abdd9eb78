// matmul_forward_bf16, CPU variant 3: a register-tiled GEMM on AVX512-BF16 (`vdpbf16ps`).
//
// Idea: `vdpbf16ps acc, x, w` multiplies 16 pairs of bf16 and adds both products of each
// pair into one fp32 lane. So the weight is packed, on every call, into the workspace
// as panels of 32 output columns: for each pair of k, 32 32-bit lanes, lane j holding
// (weight[o0+j, k], weight[o0+j, k+1]) -- two zmm loads per pair (an odd C's last
// pair and the columns past OC are zeros). One (k, k+1) pair of an inp row is one
// 32-bit value, broadcast to all 16 lanes. A tile of 8 rows x 32 columns keeps 16
// fp32 accumulators in zmm registers, started from the fp32 bias; per pair it loads
// the panel's two vectors once and reuses them for the 8 rows (2 loads, 8 broadcasts,
// 16 vdpbf16ps). 16 accumulators + 2 weight vectors + a broadcast leave room in the
// 32 zmm registers and are more than enough independent chains to hide vdpbf16ps's
// latency; 8 rows divide GPT-2's B*T (12 rows, 24 accumulators, timed no faster here,
// on a loaded machine). Each output is rounded once to nearest even (bf16_lanes.h's
// round_bits) from its fp32 sum. Threads take whole panels (dynamic schedule: a core
// shared with other work does not hold the other back): a thread packs its panel
// (C/2 x 128 bytes: 48 KiB at C=768) and walks every row tile over it while it is in
// L1/L2. Every output is one thread's, summed in an order fixed by the shape, so every
// thread count gives the same bits.
// Why it should beat variant 2: no widening or rounding passes over fp32 copies, half
// the bytes through the caches, and two products per fp32 lane per instruction
// instead of sgemm's one FMA.
// Numerics (measured here with single vdpbf16ps on chosen values): bf16 x bf16
// products are exact in fp32 (8 + 8 significant bits); the two products of a pair are
// added into the accumulator one after the other, the (k+1) one first, each addition
// rounded to nearest even (1 + 2^-24 + 2^-24 gives 1, not
// 1 + 2^-23); subnormal inputs, bf16 or the fp32 accumulator, are read as zero and
// subnormal results are flushed to zero (2^-70 * 2^-70 gives 0). Those are values
// below 1.2e-38, far under the check's absolute tolerance (2e-5 sqrt(C),
// matmul_forward.h), and the check inputs have none; a model whose activations or
// weights were subnormal would see zeros here where the reference keeps them. The sum
// runs along C in pairs, in another order than the reference's double sum: an fp32
// sum's error, inside the same tolerance.
// Measure (GFLOP/s = 2*B*T*C*OC / the median of 10 repetitions, cache flushed before each):
//   OMP_NUM_THREADS=N build/wb run matmul_forward_bf16 --variant V --backend cpu
//     --shape B=4,T=64,C=768,OC=3072 --seed 1 --repetitions 10 [--param threads=N for this rung]
//   for V = 2, 3, 4 and the fp32 op's fastest CPU rung, matmul_forward cpu/3 (OpenBLAS
//   sgemm), the same way; also at C=768 OC=2304 and C=3072 OC=768, and at B=1 T=8 and
//   B=16 T=64 for where it trails oneDNN (figures: results/cpu-amd-epyc-avx512bf16/README.md).
//   Where it trails oneDNN, both the per-call packing and the kernel itself. Our guess,
//   not measured: oneDNN's JIT kernels block along C and prefetch
//   the next panel, and pack with vector shuffles, where this rung packs with scalar
//   copies and streams each panel whole.
// Limits: skipped with the reason on CPUs without AVX512-BF16 (target.h) and in
// builds for other architectures; the packing is C*OC 32-bit writes per call (the
// weight changes every step), and a workspace of ceil(C/2)*ceil(OC/32)*128 bytes plus
// the fp32 bias; no blocking along C (at C=3072 a panel is 192 KiB, held in L2);
// threads split panels only, so OC <= 32 runs on one thread.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "contract/ops/matmul_forward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/target.h"
#include "device/cpu/threads.h"

#if WB_HAS_AVX512BF16_TARGET
#include <immintrin.h>
#endif

namespace wb::variants {
namespace {

constexpr int64_t kRows = 8;   // rows of inp per register tile
constexpr int64_t kCols = 32;  // output columns per panel: two zmm of fp32

int64_t pairs_of(int64_t C) { return (C + 1) / 2; }
int64_t panels_of(int64_t OC) { return (OC + kCols - 1) / kCols; }

// Workspace: the packed weight, panels_of(OC) panels of pairs_of(C) x kCols uint32
// (panel-major), then the bias widened to fp32 and zero-padded to panels_of(OC) * kCols.
std::size_t packed_weight_bytes(int64_t C, int64_t OC) {
  return std::size_t(panels_of(OC) * pairs_of(C) * kCols) * sizeof(uint32_t);
}
std::size_t workspace_bytes(int64_t C, int64_t OC) {
  return packed_weight_bytes(C, OC) + std::size_t(panels_of(OC) * kCols) * sizeof(float);
}

#if WB_HAS_AVX512BF16_TARGET

// One panel of the packed weight: dst[p * kCols + j] = weight[o, 2p] | weight[o, 2p+1] << 16
// with o = o0 + j; zero past OC and past C. Pair-major, so that the writes run along
// the panel and the reads along kCols rows of the weight at once.
void pack_panel(const uint16_t* weight, int64_t C, int64_t OC, int64_t o0, uint32_t* dst) {
  const int64_t full = C / 2, n = std::min(kCols, OC - o0);
  const uint16_t* w = weight + o0 * C;
  for (int64_t p = 0; p < full; ++p) {
    uint32_t* d = dst + p * kCols;
    for (int64_t j = 0; j < n; ++j) std::memcpy(d + j, w + j * C + 2 * p, sizeof(uint32_t));  // weight[o, 2p] low
    for (int64_t j = n; j < kCols; ++j) d[j] = 0;
  }
  if (C % 2) {
    uint32_t* d = dst + full * kCols;
    for (int64_t j = 0; j < kCols; ++j) d[j] = j < n ? w[j * C + C - 1] : 0u;
  }
}

// R rows (R <= kRows) x one panel: out[i, j] = round(bias[j] + sum_k inp[i, k] w[j, k])
// for i < R, j < n (n <= kCols); inp and out point at the tile's first row.
template <int R>
WB_TARGET_AVX512BF16 void tile(const uint16_t* inp, int64_t C, const uint32_t* panel, const float* bias, uint16_t* out,
                               int64_t OC, int64_t n) {
  __m512 acc[R][2];
  const __m512 b0 = _mm512_loadu_ps(bias), b1 = _mm512_loadu_ps(bias + 16);
  for (int i = 0; i < R; ++i) acc[i][0] = b0, acc[i][1] = b1;
  const int64_t full = C / 2;
  for (int64_t p = 0; p < full; ++p) {
    const __m512bh w0 = (__m512bh)_mm512_loadu_si512(panel + p * kCols);
    const __m512bh w1 = (__m512bh)_mm512_loadu_si512(panel + p * kCols + 16);
    for (int i = 0; i < R; ++i) {
      uint32_t x;
      std::memcpy(&x, inp + i * C + 2 * p, sizeof x);
      const __m512bh xx = (__m512bh)_mm512_set1_epi32(int(x));
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], xx, w0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], xx, w1);
    }
  }
  if (C % 2) {  // the last pair: inp[i, C-1] and a zero (the panel's high halves are zero too)
    const __m512bh w0 = (__m512bh)_mm512_loadu_si512(panel + full * kCols);
    const __m512bh w1 = (__m512bh)_mm512_loadu_si512(panel + full * kCols + 16);
    for (int i = 0; i < R; ++i) {
      const __m512bh xx = (__m512bh)_mm512_set1_epi32(int(inp[i * C + C - 1]));
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], xx, w0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], xx, w1);
    }
  }
  for (int i = 0; i < R; ++i) {
    alignas(64) float sum[kCols];
    _mm512_store_ps(sum, acc[i][0]);
    _mm512_store_ps(sum + 16, acc[i][1]);
    uint16_t* o = out + i * OC;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) o[j] = cpu::round_bits(sum[j]);
  }
}

using TileFn = void (*)(const uint16_t*, int64_t, const uint32_t*, const float*, uint16_t*, int64_t, int64_t);

// tile<R> for R = 1 .. kRows: the last row tile takes what rows remain.
constexpr TileFn kTiles[kRows + 1] = {nullptr,  &tile<1>, &tile<2>, &tile<3>, &tile<4>,
                                      &tile<5>, &tile<6>, &tile<7>, &tile<8>};
static_assert(kRows == 8, "kTiles lists tile<1> .. tile<kRows>");

void matmul_bf16_avx512bf16(const MatmulForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;
  const int n_threads = cpu::threads(l);
  uint32_t* packed = static_cast<uint32_t*>(l.workspace);
  float* bias = reinterpret_cast<float*>(static_cast<char*>(l.workspace) + packed_weight_bytes(C, OC));
  for (int64_t o = 0; o < panels_of(OC) * kCols; ++o) bias[o] = a.bias && o < OC ? to_float(a.bias[o]) : 0.0f;

  const int64_t panels = panels_of(OC), pairs = pairs_of(C);
  const uint16_t *inp = cpu::bits_of(a.inp), *weight = cpu::bits_of(a.weight);
  uint16_t* out = cpu::bits_of(a.out);
  // A thread packs a panel and walks every row tile over it while it is in L1/L2;
  // dynamic, so that a core shared with other work does not hold the other back.
#pragma omp parallel for num_threads(n_threads) schedule(dynamic, 1)
  for (int64_t panel = 0; panel < panels; ++panel) {
    const int64_t o0 = panel * kCols, n = std::min(kCols, OC - o0);
    uint32_t* w = packed + panel * pairs * kCols;
    pack_panel(weight, C, OC, o0, w);
    for (int64_t r0 = 0; r0 < rows; r0 += kRows)
      kTiles[std::min(kRows, rows - r0)](inp + r0 * C, C, w, bias + o0, out + r0 * OC + o0, OC, n);
  }
}

#else

void matmul_bf16_avx512bf16(const MatmulForwardBf16Args&, const Launch&) {}  // never run: its requirement skips it

#endif

}  // namespace

Variant matmul_forward_bf16_cpu_3() {
  Variant v = cpu::threaded(&matmul_bf16_avx512bf16,
                            "weight packed in k-pair panels of 32 columns, 8x32 register tiles of fp32 on vdpbf16ps "
                            "(AVX512-BF16), bias in fp32, each output rounded once, OpenMP");
  v.workspace = [](const Shape& s, const ParamValues&) { return workspace_bytes(s.C, s.OC); };
  v.requirements = {cpu::needs(cpu::Capability::avx512bf16)};
  return v;
}

}  // namespace wb::variants
