// Test-only CUDA variants of residual_forward with planted faults, never in wb's own
// registry: the wb_planted program (wb_planted.cpp) adds them to a copy of it. This
// file is compiled twice, like a variant: by nvcc (backend cuda, where nvcc is found)
// and by the host compiler through the emulator's shim (backend emu).
//   90 out_of_bounds  every thread writes its element, and thread 0 also writes
//                     outside `out`: one element past the end under the emulator
//                     (its memcheck canary), far out of the allocation on a GPU (an
//                     illegal address). The context is lost, on both.
//   91 naive_again    correct: the naive port, to be run (or not) after the fault.
//   89 faults_at_64   90's fault at block size 64 with unroll 1 only, the naive port at
//                     its five other configurations (--isolate checks those after the
//                     fault, block size 64 with unroll 2 among them).
// And one per class of bug that the emulator's plain build catches (see the README's
// "Running CUDA kernels without a GPU"), each otherwise a correct residual_forward:
//   92 shared_race       each thread claims the element it computes with a shared
//                        `next++` instead of atomicAdd: lost updates leave elements
//                        unwritten (caught in the interleaving pass);
//   93 waits_for_last    block 0 waits for a flag that the grid's last block sets
//                        (the watchdog, when blocks run one at a time);
//   94 exits_before_barrier  threads past the end return before a __syncthreads the
//                        others wait at (a note; a fault with --strict-sync);
//   95 far_write         thread 0 also writes 16 KiB past the end of `out` (the
//                        guard region after it: an illegal address);
//   96 reads_past_end    adds 1e-30 times the element after its own: past the end of
//                        inp1 for the last one (the canary reads as NaN).
//   97 strided           correct, but every warp's accesses have a stride of 2 floats: 8
//                        sectors a request where 4 would do (the counters gate's planted
//                        regression, tests/emu/test_counters_gate.cpp).
//   84 half_warp_turns   correct, but the two half-warps of every warp take turns (half
//                        0 first, a __syncwarp between) at its global loads and its shared
//                        store: on a GPU a request of 16 lanes per turn, and no bank
//                        conflict (the counters' control for a warp's turns,
//                        tests/emu/test_counters_gate.cpp); 83 half_warps_together is the
//                        same with both halves in the first turn (requests of 32 lanes, a
//                        2-way conflict in the store).
//   85-88                blocks that meet through atomics in scratch words (the
//                        workspace): 86 assumes block 0 starts first (caught by the
//                        run that starts it last), 87 zeroes plainly what the other
//                        blocks add atomically (racecheck across blocks), 85 and 88
//                        correct (atomics only; the last-block pattern). See
//                        AcrossBlocks below.
//   98 allocates         correct, but its launcher allocates a scratch buffer with
//                        cudaMalloc on every call (the sum lands there, a device-to-device
//                        cudaMemcpyAsync moves it to `out`, cudaFree releases it): legal in
//                        an ordinary check, refused inside a CUDA-graph capture
//                        (tests/emu/test_graph_capture.cpp).
// And of softmax_forward, the two ports of docs/porting-example.md, kernels of a public
// ladder ported as their authors wrote them (the fixes are in that page):
//   90 ported_slot_reuse  a block per row; one shared slot per warp holds the warps' maxima,
//                        then their sums, with no barrier between the last read of the
//                        maximum from slot 0 and warp 0's write of its sum there (a
//                        write-after-read race: caught by the warps-alone run);
//   91 ported_exits_early a warp per row; threads at or past V return at the top, before
//                        the row is even chosen, so a row shorter than the block loses the
//                        warps that had its later rows (left unwritten) and the full-mask
//                        shuffles run with lanes gone.
//   92, 93               the two fixed: 90 with a barrier after the maximum's last read,
//                        91 without its early return (correct).
// And of residual_forward_bf16, bf16 faults that loose checks let through:
//   90 truncates         rounds the fp32 sum toward zero (__float2bfloat16_rz) instead
//                        of to nearest even: every value about half an ulp low in
//                        magnitude (llm.c's 7.9% relative check passes it).
// And of layernorm_forward_bf16 (one thread per row, otherwise its naive port):
//   90 accumulates_in_bf16  sums the row and the squared deviations in bf16
//                        (__hadd): every partial sum rounded to 8 bits;
//   91 rounds_twice      rounds the normalised value to bf16 before scaling and
//                        shifting it, then rounds the output: two roundings where the
//                        contract says one.
// And of fused_residual_layernorm_forward_bf16 (one thread per row):
//   90 normalises_unrounded  stores the rounded residual but takes the statistics and
//                        the normalised values from the fp32 sums: not the residual the
//                        backward pass reads.
// And of adamw_bf16 (one thread per parameter):
//   90 truncates_params  writes the bf16 parameters rounded toward zero instead of
//                        stochastically: within one ulp of the master weight, so only
//                        the bias test (about -0.5 ulp) catches it.
// And of matmul_backward_bias_bf16 (one thread per column):
//   90 rounds_twice      rounds the fp32 column sum to bf16, then adds it to the old
//                        dbias and rounds again: what a bf16 GEMM or reduction writing
//                        into a scratch buffer and a separate add would do.
// And of matmul_forward_bf16 (cuBLAS):
//   90 bf16_gemm_output  matmul_forward_bf16 cuda/2's first form: the bias copied into
//                        the bf16 out, then cublasGemmEx with a bf16 C and beta = 1,
//                        trusting cuBLAS to round each output once. On an H200 it did
//                        not (split sums added in bf16: up to 0.73 ulp off); the
//                        emulator's cuBLAS takes that freedom, so this must fail there.
// And of matmul_forward_bf16 with mma.sync m16n8k16, ldmatrix and a two-stage cp.async
// pipeline (tests/planted/tensor_core_faults.cuh; a block of two warps per 16x16 tile,
// C % 8 == 0):
//   91 mma_pipeline      correct: the control the four bugs below are copies of;
//   92 swapped_a_fragment  A loaded transposed (row and column swapped): a wrong product;
//   93 reads_before_wait   the compute reads a stage before its cp_async_wait: NaNs;
//   94 row_one_off       A's ldmatrix row addresses one row off: a wrong product (or a
//                        row past the shared tile, a memcheck fault);
//   95 missing_barrier   no __syncthreads between the wait and the compute: a warp may
//                        read the other warp's copies before they land (NaNs in a
//                        shuffled or interleaved schedule at the wide shape; a race the
//                        ThreadSanitizer pass reports, ci/emu_sanitized.sh thread).
// And of attention_forward_bf16, the FlashAttention-2 kernel of its cuda/4
// (variants/attention/flash_attention_forward.cuh) at query_tile 32, key_tile 16 and two
// stages (several key tiles and refills at the ragged shape's T = 43):
//   91 flash_mma         correct: the control the four bugs below are copies of;
//   92 diagonal_tile_skipped  a warp skips the key tile that holds its diagonal, as if it
//                        were above it: rows whose keys all lie there get no weights
//                        (l = 0: not finite), the others lose their last keys;
//   93 no_rescale        the running output is not rescaled when a later key tile
//                        raises a row's max: wrong wherever a row spans two key tiles;
//   94 p_fragment_misplaced  P's A fragment with its registers 1 and 2 swapped (row
//                        g + 8's first keys and row g's last ones): a wrong P V;
//   95 reads_before_wait  each key tile (and Q) is read before the cp.async wait that
//                        lands it: the emulator's poison, NaNs.
// and, at cuda/4's default launch (query_tile 64, key_tile 64, two stages):
//   96 refill_before_barrier  the next key tile's refill issued before the barrier that
//                        ends the other warps' reads of its buffer: the first warp to
//                        reach it poisons the tile the others are still reading (NaNs),
//                        wherever a block refills, i.e. where the last query tile spans
//                        three key tiles of 64 or more (the flash shape's T = 200); at
//                        the ragged shape's T = 43 nothing is refilled.
// And of attention_backward_bf16, the FlashAttention-2 backward of its cuda/3
// (variants/attention/flash_attention_backward_mma.cuh) at key_tile 32 and query_tile 16 (two
// dk/dv warps, several query tiles and refills at the ragged shape's T = 43):
//   91 flash_mma_backward  correct, at dq_atomics 0 and 1: the control the three bugs
//                        below are copies of;
//   92 dq_without_atomics  dq_atomics=1 adds each block's dQ tile into the fp32
//                        accumulator with a plain read-add-write instead of atomicAdd:
//                        the blocks of different key tiles that add into the same rows
//                        lose updates when they run at once. A race across blocks only
//                        (one adding thread per element in a block), each add after a
//                        __syncthreads: the plain build's interleaving pass reports it
//                        (racecheck: a plain write to bytes another block of the launch
//                        wrote) at the ragged shape, where a row spans two key tiles (at
//                        tiny there is one key tile, one adding block per row, no race);
//   93 diagonal_query_tile_skipped  the dk/dv blocks start one query tile late,
//                        skipping the tile that holds their diagonal: the keys' own
//                        query rows (and, at tiny, all of them) give no dK and dV;
//   94 backward_reads_before_wait  each query stage (Q, dO, lse, D; and K and V with
//                        the first) is read before the cp.async wait that lands it: the
//                        emulator's poison, NaNs.
//   95 last_query_tile_dq_zeroed  dq_atomics=0 only: the kernels run as in 91, then
//                        the rows of the dq kernel's last query tile (rows from
//                        32 floor((T - 1) / 32) on) get dQ = 0, as if that tile's block
//                        stopped before its first key tile and stored its zeroed
//                        accumulators. At the ragged shape (T = 43: two query tiles) rows
//                        32..42 lose dQ; their gradients are small, and the elementwise
//                        tolerance sees only a few of them (9 to 23 of 65016 elements at
//                        seeds 1-12), the row test (docs/precision.md) every zeroed row.
//                        At tiny (one tile) every dQ row is zero.
// And of attention_forward_bf16 through cuDNN's fused SDPA (the emulator's stand-in,
// device/cuda/cudnn_sdpa_emu.cpp; built where the emulator or cuDNN is):
//   97 sdpa_out_one_row_on  cuda/3's call with O one row (C elements) past out: the
//                        last row lands past the end of out. The stand-in checks every
//                        tensor against device memory before it computes (a memcheck
//                        fault, as cuDNN's kernels would raise an illegal address or
//                        overwrite a neighbour on a GPU).
//   98 sdpa_stats_misaligned  cuda/3's call with Stats 4 bytes into the workspace:
//                        inside device memory, but not at the 16 bytes the graph
//                        declares of every tensor (a misaligned-address fault; on a GPU
//                        undefined, cuDNN's vector accesses assume the declaration).
// And of matmul_forward (TF32 tensor cores, wmma m16n16k8; one warp per 16x16 tile):
//   90 assumes_fragment_layout  adds the bias into the accumulator fragment's x[i]
//                        as if lane l held columns 2 * (l % 4) + (i & 1) + 8 * (i / 4)
//                        (one GPU's layout). CUDA leaves the layout unspecified: the
//                        emulator draws it per run, and the bias lands in the wrong
//                        columns. (On a GPU it passes only where the guess is right.)
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include <cuda_bf16.h>
#include <mma.h>

#include "contract/ops/adamw.h"
#include "contract/ops/attention_backward.h"
#include "contract/ops/attention_forward.h"
#include "contract/ops/fused_residual_layernorm_forward.h"
#include "contract/ops/layernorm_forward.h"
#include "contract/ops/matmul_backward_bias.h"
#include "contract/ops/matmul_forward.h"
#include "contract/ops/residual_forward.h"
#include "contract/ops/softmax_forward.h"
#include "device/cuda/as_device.cuh"
#if WB_EMU || WB_HAVE_CUDNN
#include "device/cuda/cudnn_sdpa.h"
#endif
#include "device/cuda/libraries.h"
#include "device/cuda/packed.cuh"
#include "tests/planted/tensor_core_faults.cuh"
#include "variants/adamw/adamw_master.cuh"
#include "variants/attention/flash_attention_backward_mma.cuh"
#include "variants/attention/flash_attention_forward.cuh"

namespace wb::variants {
namespace {

__global__ void planted_out_of_bounds(float* out, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = inp1[i] + inp2[i];
#if defined(WB_EMU)
  const int64_t outside = n;  // the emulator's canary right after the buffer
#else
  const int64_t outside = int64_t(1) << 38;  // a terabyte past it: no allocation there
#endif
  if (i == 0) out[outside] = 1.0f;
}

__global__ void planted_naive(float* out, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = inp1[i] + inp2[i];
}

constexpr int kPlantedBlock = 32;

__global__ void planted_shared_race(float* out, const float* inp1, const float* inp2, int64_t n) {
  WB_SHARED(int, next, [1]);
  if (threadIdx.x == 0) next[0] = 0;
  __syncthreads();
  const int slot = next[0]++;  // the bug: atomicAdd(&next[0], 1)
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + slot;
  if (slot < int(blockDim.x) && i < n) out[i] = inp1[i] + inp2[i];
}

__global__ void planted_waits_for_last(int* done, float* out, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    while (atomicCAS(done, 0, 0) == 0) {  // the bug: no block may wait for another
    }
  if (i < n) out[i] = inp1[i] + inp2[i];
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) atomicExch(done, 1);
}

// Blocks that meet through atomics in a scratch word or two (the workspace, zeroed before
// every launch: `scratch`), each otherwise the naive port.
enum class AcrossBlocks {
  assumes_block_0_first,  // 86: block 0 raises a flag (atomicExch) that every other
                          // block reads (atomically) after writing its elements,
                          // assuming block 0 started first; a block that finds it down
                          // adds 1 to its first element. Right when the blocks start in
                          // index order; wrong when block 0 starts last.
  zeroes_what_others_add,  // 87: block 0 zeroes a sum plainly, assuming it runs first,
                           // where the other blocks add to it with atomicAdd: a race
                           // whatever the order (the output does not show it).
  last_block_pattern,      // 88: correct: every block adds to the sum atomically, then
                           // a __threadfence and a ticket (atomicAdd); the block that
                           // draws the last ticket overwrites the sum plainly with
                           // its mean and resets the ticket.
  atomics_only,            // 85: correct: every block adds to the sum atomically.
};

template <AcrossBlocks kWhat>
__global__ void planted_across_blocks(unsigned* scratch, float* out, const float* inp1, const float* inp2,
                                      int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float* sum = reinterpret_cast<float*>(scratch);
  unsigned* ticket = scratch + 1;
  // Every thread of block 0, so that whichever runs first raises it at once.
  if (kWhat == AcrossBlocks::assumes_block_0_first && blockIdx.x == 0) atomicExch(scratch, 1u);
  if (kWhat == AcrossBlocks::zeroes_what_others_add && blockIdx.x == 0 && threadIdx.x == 0) *sum = 0.0f;
  if (i < n) out[i] = inp1[i] + inp2[i];
  if (kWhat != AcrossBlocks::assumes_block_0_first && i < n &&
      (kWhat != AcrossBlocks::zeroes_what_others_add || blockIdx.x != 0))
    atomicAdd(sum, out[i]);
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (kWhat == AcrossBlocks::assumes_block_0_first && blockIdx.x != 0 && i < n && atomicAdd(scratch, 0u) == 0)
    out[i] += 1.0f;
  if (kWhat == AcrossBlocks::last_block_pattern) {
    __threadfence();
    if (atomicAdd(ticket, 1u) == gridDim.x - 1) {
      *sum = *sum / float(n);
      *ticket = 0;
    }
  }
}

template <AcrossBlocks kWhat>
void launch_across_blocks(const ResidualForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  auto* scratch = static_cast<unsigned*>(l.workspace);
  WB_CHECK(cudaMemsetAsync(scratch, 0, 2 * sizeof(unsigned), cuda::stream(l)));
  WB_LAUNCH(planted_across_blocks<kWhat>, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), scratch, a.out,
            a.inp1, a.inp2, a.N);
}

// The flag block 0 waits for, zeroed before every launch (the workspace).
void launch_waits_for_last(const ResidualForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  int* done = static_cast<int*>(l.workspace);
  WB_CHECK(cudaMemsetAsync(done, 0, sizeof(int), cuda::stream(l)));
  WB_LAUNCH(planted_waits_for_last, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), done, a.out, a.inp1,
            a.inp2, a.N);
}

__global__ void planted_exits_before_barrier(float* out, const float* inp1, const float* inp2, int64_t n) {
  WB_SHARED(float, staged, [kPlantedBlock]);
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  staged[threadIdx.x] = inp1[i] + inp2[i];
  __syncthreads();
  out[i] = staged[threadIdx.x];
}

__global__ void planted_far_write(float* out, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = inp1[i] + inp2[i];
  if (i == 0) out[n + 4096] = 1.0f;
}

__global__ void planted_reads_past_end(float* out, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = inp1[i] + inp2[i] + 1e-30f * inp1[i + 1];
}

__global__ void planted_bf16_truncates(__nv_bfloat16* out, const __nv_bfloat16* inp1, const __nv_bfloat16* inp2,
                                       int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16_rz(__bfloat162float(inp1[i]) + __bfloat162float(inp2[i]));
}

// A launcher per kernel of residual_forward's shape (Args: the fp32 or the bf16 op's),
// one thread per element, so that messages name the kernel (the launch's text).
#define WB_PLANTED_LAUNCHER(kernel, Args)                                                            \
  void launch_##kernel(const Args& a, const Launch& l) {                                             \
    const int block = l.block_size();                                                                \
    WB_LAUNCH(kernel, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), cuda::as_device(a.out), \
              cuda::as_device(a.inp1), cuda::as_device(a.inp2), a.N);                                \
  }
WB_PLANTED_LAUNCHER(planted_shared_race, ResidualForwardArgs)
WB_PLANTED_LAUNCHER(planted_exits_before_barrier, ResidualForwardArgs)
WB_PLANTED_LAUNCHER(planted_far_write, ResidualForwardArgs)
WB_PLANTED_LAUNCHER(planted_reads_past_end, ResidualForwardArgs)
WB_PLANTED_LAUNCHER(planted_out_of_bounds, ResidualForwardArgs)
WB_PLANTED_LAUNCHER(planted_naive, ResidualForwardArgs)
WB_PLANTED_LAUNCHER(planted_bf16_truncates, ResidualForwardBf16Args)
#undef WB_PLANTED_LAUNCHER

// 89: the out-of-bounds write of 90 at block size 64 with unroll 1 only, the naive port
// at every other configuration (unroll changes nothing else): the configurations after
// its fault, block size 64 with unroll 2 among them, must still be checked under --isolate.
void launch_faults_at_64(const ResidualForwardArgs& a, const Launch& l) {
  if (l.block_size() == 64 && l.get("unroll") == 1) return launch_planted_out_of_bounds(a, l);
  launch_planted_naive(a, l);
}

// softmax_forward emu/90: a block per row, the warps' partial maxima and then their
// partial sums through one shared slot per warp. The maximum is broadcast from slot 0;
// warp 0 then writes its partial sum into slot 0 with no barrier after the other warps'
// read of it, so a warp that reads late takes warp 0's sum for the maximum.
template <bool kFixed>
__global__ void planted_softmax_slot_reuse(float* probs, const float* logits, int V, int Vp) {
  WB_SHARED(float, slot, [32]);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  const float* x = logits + size_t(blockIdx.x) * Vp;
  float* p = probs + size_t(blockIdx.x) * Vp;

  float m = -INFINITY;
  for (int i = threadIdx.x; i < V; i += blockDim.x) m = fmaxf(m, x[i]);
  for (int d = 16; d > 0; d /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));
  if (lane == 0) slot[warp] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < warps; ++w) slot[0] = fmaxf(slot[0], slot[w]);
  }
  __syncthreads();
  const float row_max = slot[0];  // read by every warp ...
  if (kFixed) __syncthreads();     // (the fix: all have read it before slot 0 is reused)

  float sum = 0.0f;
  for (int i = threadIdx.x; i < V; i += blockDim.x) sum += expf(x[i] - row_max);
  for (int d = 16; d > 0; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
  if (lane == 0) slot[warp] = sum;  // ... and overwritten here by warp 0: no barrier between
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < warps; ++w) slot[0] += slot[w];
  }
  __syncthreads();
  const float inv = 1.0f / slot[0];
  for (int i = threadIdx.x; i < Vp; i += blockDim.x) p[i] = i < V ? expf(x[i] - row_max) * inv : 0.0f;
}

// softmax_forward emu/91: a warp per row, online max and sum; the early return on
// threadIdx.x >= V comes first, as in the ladder's kernel.
template <bool kFixed>
__global__ void planted_softmax_exits_early(float* probs, const float* logits, int rows, int V, int Vp) {
  if (!kFixed && int(threadIdx.x) >= V) return;  // (the fix: no such line; whole warps leave below)
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  const float* x = logits + size_t(row) * Vp;
  float* p = probs + size_t(row) * Vp;

  float m = -INFINITY, sum = 0.0f;
  for (int i = lane; i < V; i += 32) {
    const float bigger = fmaxf(m, x[i]);
    sum = sum * expf(m - bigger) + expf(x[i] - bigger);
    m = bigger;
  }
  for (int d = 16; d > 0; d /= 2) {
    const float om = __shfl_xor_sync(0xffffffffu, m, d), os = __shfl_xor_sync(0xffffffffu, sum, d);
    const float bigger = fmaxf(m, om);
    sum = (m == -INFINITY ? 0.0f : sum * expf(m - bigger)) + (om == -INFINITY ? 0.0f : os * expf(om - bigger));
    m = bigger;
  }
  for (int i = lane; i < Vp; i += 32) p[i] = i < V ? expf(x[i] - m) / sum : 0.0f;
}

template <bool kFixed>
void launch_softmax_slot_reuse(const SoftmaxForwardArgs& a, const Launch& l) {
  WB_LAUNCH(planted_softmax_slot_reuse<kFixed>, a.B * a.T, l.block_size(), 0, cuda::stream(l), a.probs, a.logits, a.V, a.Vp);
}

template <bool kFixed>
void launch_softmax_exits_early(const SoftmaxForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T, rows_per_block = l.block_size() / 32;
  WB_LAUNCH(planted_softmax_exits_early<kFixed>, cuda::grid_for(rows, rows_per_block), l.block_size(), 0, cuda::stream(l),
            a.probs, a.logits, rows, a.V, a.Vp);
}

// The two bf16 faults of layernorm_forward_bf16 emu/90 and emu/91.
enum class LayernormBug { accumulate_in_bf16, round_twice };

template <LayernormBug kBug>
__global__ void planted_layernorm_bf16(__nv_bfloat16* out, float* mean, float* rstd, const __nv_bfloat16* inp,
                                       const __nv_bfloat16* weight, const __nv_bfloat16* bias, int rows, int C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const __nv_bfloat16* x = inp + size_t(row) * C;
  float m, var;
  if (kBug == LayernormBug::accumulate_in_bf16) {
    __nv_bfloat16 sum = __float2bfloat16(0.0f);
    for (int c = 0; c < C; ++c) sum = __hadd(sum, x[c]);
    m = __bfloat162float(sum) / C;
    __nv_bfloat16 squares = __float2bfloat16(0.0f);
    for (int c = 0; c < C; ++c) {
      const __nv_bfloat16 d = __float2bfloat16(__bfloat162float(x[c]) - m);
      squares = __hfma(d, d, squares);
    }
    var = __bfloat162float(squares);
  } else {
    float sum = 0.0f;
    for (int c = 0; c < C; ++c) sum += __bfloat162float(x[c]);
    m = sum / C;
    var = 0.0f;
    for (int c = 0; c < C; ++c) {
      const float d = __bfloat162float(x[c]) - m;
      var += d * d;
    }
  }
  const float s = rsqrtf(var / C + kLayernormEps);
  __nv_bfloat16* y = out + size_t(row) * C;
  for (int c = 0; c < C; ++c) {
    float normed = (__bfloat162float(x[c]) - m) * s;
    if (kBug == LayernormBug::round_twice) normed = __bfloat162float(__float2bfloat16(normed));
    y[c] = __float2bfloat16(normed * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
  }
  mean[row] = m;
  rstd[row] = s;
}

template <LayernormBug kBug>
void launch_layernorm_bf16(const LayernormForwardBf16Args& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  WB_LAUNCH(planted_layernorm_bf16<kBug>, cuda::grid_for(rows, block), block, 0, cuda::stream(l), cuda::as_cuda(a.out),
            a.mean, a.rstd, cuda::as_cuda(a.inp), cuda::as_cuda(a.weight), cuda::as_cuda(a.bias), rows, a.C);
}

// Correct, but uncoalesced: two warps share 64 elements, the first taking the even
// ones and the second the odd ones, so that every load and store of a warp has a
// stride of 2 floats: 8 sectors a request where 4 would do (the counters gate's planted
// regression: a change that uncoalesces residual_forward emu/91). One element per
// thread, so that the host compiler has no neighbouring accesses to merge.
__global__ void planted_strided(float* out, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t warp = i / 32, lane = i % 32;
  const int64_t j = warp / 2 * 64 + 2 * lane + warp % 2;
  if (j < n) out[j] = inp1[j] + inp2[j];
}

// Correct, but the two half-warps of each warp take turns, half 0 first, a __syncwarp
// between the turns: in its turn a half loads its 16 elements of inp1 and inp2 and
// stores their sum into the warp's staging, lane l at word 2l; after the turns every
// lane writes its element out from there. A GPU issues each turn's loads and store for
// the 16 lanes of the turn: two requests a warp of each, 2 sectors a load, and the
// store's 16 lanes in 16 distinct banks (no conflict). With kTurns false both halves
// take the first turn together: one request of 32 lanes, 4 sectors a load, and the
// store's 32 lanes in 16 banks, a real 2-way conflict. `turns` (2) is a parameter so
// that the turns stay one loop, one static site, as nvcc keeps such a loop too.
template <bool kTurns>
__global__ void planted_half_warp_turns(float* out, const float* inp1, const float* inp2, int64_t n, int turns) {
  WB_SHARED(float, staged, [2 * kPlantedBlock]);
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = int(threadIdx.x % 32);
  float* warp_staging = staged + 2 * (int(threadIdx.x) - lane);  // 64 words a warp
  for (int turn = 0; turn < turns; ++turn) {
    if ((kTurns ? lane / 16 : 0) == turn && i < n) warp_staging[2 * lane] = inp1[i] + inp2[i];
    __syncwarp();
  }
  if (i < n) out[i] = warp_staging[2 * lane];
}

template <bool kTurns>
void launch_half_warp_turns(const ResidualForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(planted_half_warp_turns<kTurns>, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), a.out, a.inp1,
            a.inp2, a.N, 2);
}

// A scratch buffer allocated and freed on every call: what a captured step may not do.
void launch_allocates(const ResidualForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  float* scratch = nullptr;
  WB_CHECK(cudaMalloc(&scratch, std::size_t(a.N) * sizeof(float)));
  WB_LAUNCH(planted_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), scratch, a.inp1, a.inp2, a.N);
  WB_CHECK(cudaMemcpyAsync(a.out, scratch, std::size_t(a.N) * sizeof(float), cudaMemcpyDeviceToDevice,
                           cuda::stream(l)));
  WB_CHECK(cudaFree(scratch));
}

void launch_strided(const ResidualForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(planted_strided, cuda::grid_for((a.N + 63) / 64 * 64, block), block, 0, cuda::stream(l), a.out, a.inp1,
            a.inp2, a.N);
}

__global__ void planted_fused_normalises_unrounded(__nv_bfloat16* residual, __nv_bfloat16* normed, float* mean,
                                                  float* rstd, const __nv_bfloat16* inp1, const __nv_bfloat16* inp2,
                                                  const __nv_bfloat16* weight, const __nv_bfloat16* bias, int rows,
                                                  int C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const size_t offset = size_t(row) * C;
  auto x = [&](int c) { return __bfloat162float(inp1[offset + c]) + __bfloat162float(inp2[offset + c]); };
  float sum = 0.0f;
  for (int c = 0; c < C; ++c) {
    residual[offset + c] = __float2bfloat16(x(c));
    sum += x(c);  // the bug: the fp32 sum, not the stored residual
  }
  const float m = sum / C;
  float var = 0.0f;
  for (int c = 0; c < C; ++c) var += (x(c) - m) * (x(c) - m);
  const float s = rsqrtf(var / C + kLayernormEps);
  for (int c = 0; c < C; ++c)
    normed[offset + c] = __float2bfloat16((x(c) - m) * s * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
  mean[row] = m;
  rstd[row] = s;
}

void launch_fused_normalises_unrounded(const FusedResidualLayernormForwardBf16Args& a, const Launch& l) {
  const int rows = a.B * a.T;
  WB_LAUNCH(planted_fused_normalises_unrounded, cuda::grid_for(rows, kPlantedBlock), kPlantedBlock, 0,
            cuda::stream(l), cuda::as_cuda(a.residual), cuda::as_cuda(a.normed), a.mean, a.rstd,
            cuda::as_cuda(a.inp1), cuda::as_cuda(a.inp2), cuda::as_cuda(a.weight), cuda::as_cuda(a.bias), rows, a.C);
}

__global__ void planted_adamw_truncates_params(__nv_bfloat16* params, float* master, float* m, float* v,
                                               const __nv_bfloat16* grads, int64_t n,
                                               cuda::adamw::StepInputs in) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const cuda::adamw::Step s = cuda::adamw::step_at(in);
  // the bug: toward zero, whatever the seed says
  params[i] = __float2bfloat16_rz(cuda::adamw::update_master(master, m, v, grads[i], i, s));
}

void launch_adamw_truncates_params(const AdamwBf16Args& a, const Launch& l) {
  WB_LAUNCH(planted_adamw_truncates_params, cuda::grid_for(a.N, kPlantedBlock), kPlantedBlock, 0, cuda::stream(l),
            cuda::as_cuda(a.params), a.master, a.m, a.v, cuda::as_cuda(a.grads), a.N,
            cuda::adamw::inputs_of(a));
}

__global__ void planted_bias_bf16_rounds_twice(__nv_bfloat16* dbias, const __nv_bfloat16* dout, int rows, int OC) {
  const int o = blockIdx.x * blockDim.x + threadIdx.x;
  if (o >= OC) return;
  float sum = 0.0f;
  for (int r = 0; r < rows; ++r) sum += __bfloat162float(dout[size_t(r) * OC + o]);
  const __nv_bfloat16 rounded = __float2bfloat16(sum);  // the bug: a first rounding
  dbias[o] = __float2bfloat16(__bfloat162float(dbias[o]) + __bfloat162float(rounded));
}

void launch_bias_bf16_rounds_twice(const MatmulBackwardBiasBf16Args& a, const Launch& l) {
  WB_LAUNCH(planted_bias_bf16_rounds_twice, cuda::grid_for(a.OC, kPlantedBlock), kPlantedBlock, 0, cuda::stream(l),
            cuda::as_cuda(a.dbias), cuda::as_cuda(a.dout), a.B * a.T, a.OC);
}

__global__ void planted_broadcast_bias_bf16(__nv_bfloat16* out, const __nv_bfloat16* bias, int64_t n, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = bias[i % OC];
}

void launch_bf16_gemm_output(const MatmulForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const cudaStream_t stream = cuda::stream(l);
  if (a.bias)
    WB_LAUNCH(planted_broadcast_bias_bf16, cuda::grid_for(rows * a.OC, kPlantedBlock), kPlantedBlock, 0, stream,
              cuda::as_cuda(a.out), cuda::as_cuda(a.bias), rows * a.OC, a.OC);
  cublasHandle_t handle = cuda::libraries(l).cublas();
  WB_CHECK(cublasSetStream(handle, stream));
  WB_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  WB_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  const float alpha = 1.0f, beta = a.bias ? 1.0f : 0.0f;
  WB_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, a.OC, int(rows), a.C, &alpha, a.weight, CUDA_R_16BF, a.C,
                        a.inp, CUDA_R_16BF, a.C, &beta, a.out, CUDA_R_16BF, a.OC, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT));
}

// matmul_forward with TF32 wmma: 8 channels at a time staged through shared memory
// (rounded to TF32), one mma_sync each; the epilogue's bias is the planted bug.
__global__ void planted_assumes_fragment_layout(float* out, const float* inp, const float* weight, const float* bias,
                                                int rows, int C, int OC) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  WB_SHARED_ALIGNED(32, float, a_tile, [16 * 8]);  // [m][k]: inp rows, row-major A (ld 8)
  WB_SHARED_ALIGNED(32, float, b_tile, [16 * 8]);  // [n][k]: weight rows, col-major B (ld 8)
  WB_SHARED_ALIGNED(32, float, c_tile, [16 * 16]);
  const int lane = threadIdx.x;
  const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k0 = 0; k0 < C; k0 += 8) {
    for (int e = lane; e < 16 * 8; e += 32) {
      const int m = e / 8, k = k0 + e % 8;
      const int r = row0 + m, o = col0 + m;
      a_tile[e] = wmma::__float_to_tf32(r < rows && k < C ? inp[int64_t(r) * C + k] : 0.0f);
      b_tile[e] = wmma::__float_to_tf32(o < OC && k < C ? weight[int64_t(o) * C + k] : 0.0f);
    }
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> af;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> bf;
    wmma::load_matrix_sync(af, a_tile, 8);
    wmma::load_matrix_sync(bf, b_tile, 8);
    wmma::mma_sync(acc, af, bf, acc);
    __syncwarp();
  }
  if (bias) {
    for (int i = 0; i < acc.num_elements; ++i) {
      const int o = col0 + 2 * (lane % 4) + (i & 1) + 8 * (i / 4);  // the bug: a layout CUDA never promised
      acc.x[i] += o < OC ? bias[o] : 0.0f;
    }
  }
  wmma::store_matrix_sync(c_tile, acc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int e = lane; e < 16 * 16; e += 32) {
    const int r = row0 + e / 16, o = col0 + e % 16;
    if (r < rows && o < OC) out[int64_t(r) * OC + o] = c_tile[e];
  }
#endif
}

void launch_assumes_fragment_layout(const MatmulForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const dim3 grid(cuda::grid_for(a.OC, 16), cuda::grid_for(rows, 16));
  WB_LAUNCH(planted_assumes_fragment_layout, grid, 32, 0, cuda::stream(l), a.out, a.inp, a.weight, a.bias, rows, a.C,
            a.OC);
}

template <planted_tc::Bug kBug>
void launch_mma_pipeline(const MatmulForwardBf16Args& a, const Launch& l) {
  const int rows = a.B * a.T;
  WB_LAUNCH(planted_tc::mma_matmul_bf16<kBug>, planted_tc::mma_matmul_grid(rows, a.OC), planted_tc::kThreads, 0,
            cuda::stream(l), cuda::as_cuda(a.out), cuda::as_cuda(a.inp), cuda::as_cuda(a.weight), cuda::as_cuda(a.bias),
            rows, a.C, a.OC);
}

// Two warps: a query tile of 32 rows.
constexpr int kFlashBlock = 64;

template <int kFault>
void launch_flash(const AttentionForwardBf16Args& a, const Launch& l) {
  cuda::flash_attention_forward::launch<kFault>(cuda::as_cuda(a.out), a.lse, cuda::as_cuda(a.qkv), a.B, a.T, a.C,
                                                a.NH, kFlashBlock / 2, 16, 2, cuda::stream(l),
                                                "attention_forward_bf16 (planted)");
}

// At cuda/4's default launch: query_tile 64 (four warps), key_tile 64, two stages.
template <int kFault>
void launch_flash_default(const AttentionForwardBf16Args& a, const Launch& l) {
  cuda::flash_attention_forward::launch<kFault>(cuda::as_cuda(a.out), a.lse, cuda::as_cuda(a.qkv), a.B, a.T, a.C,
                                                a.NH, 64, 64, 2, cuda::stream(l), "attention_forward_bf16 (planted)");
}

// The backward at key_tile 32 and query_tile 16; kAtomicOnly: dq_atomics=1 whatever the
// parameter says (the fault lives in that form).
template <int kFault, bool kAtomicOnly>
void launch_flash_backward(const AttentionBackwardBf16Args& a, const Launch& l) {
  cuda::flash_attention_backward_mma::launch<kFault>(
      cuda::as_cuda(a.dqkv), cuda::as_cuda(a.dout), cuda::as_cuda(a.qkv), cuda::as_cuda(a.out), a.lse, a.B, a.T, a.C,
      a.NH, 32, 16, kAtomicOnly || l.get("dq_atomics") != 0, l.workspace, l.workspace_bytes, cuda::stream(l),
      "attention_backward_bf16 (planted)");
}

// dQ, the first C channels of dqkv's rows, set to zero from row `first` of each
// sequence on.
__global__ void planted_zero_dq_rows(__nv_bfloat16* dqkv, int B, int T, int C, int first) {
  const int64_t rows = int64_t(B) * (T - first);
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * C) return;
  const int64_t row = i / C, b = row / (T - first), t = first + row % (T - first);
  dqkv[(b * T + t) * 3 * C + i % C] = __float2bfloat16(0.0f);
}

// 91's kernels at dq_atomics=0, then dQ of the dq kernel's last query tile (key_tile 32
// rows) zeroed.
void launch_last_query_tile_dq_zeroed(const AttentionBackwardBf16Args& a, const Launch& l) {
  launch_flash_backward<cuda::flash_attention_backward_mma::kNone, false>(a, l);
  const int first = (a.T - 1) / 32 * 32;
  const int64_t n = int64_t(a.B) * (a.T - first) * a.C;
  WB_LAUNCH(planted_zero_dq_rows, cuda::grid_for(n, kPlantedBlock), kPlantedBlock, 0, cuda::stream(l),
            cuda::as_cuda(a.dqkv), a.B, a.T, a.C, first);
}

// Every planted variant is a test-only CUDA variant of one op with a single block size;
// what tells them apart is the op, the id, the name and the summary (and, for a few, a
// workspace, a numeric class or a minimum compute capability).
template <class Args>
Variant test_only(void (*fn)(const Args&, const Launch&), std::string op, int id, std::string name, std::string summary,
                  int block = kPlantedBlock) {
  Variant v = Variant::of(fn);
  v.op = std::move(op);
  v.backend = Backend::cuda;
  v.id = id;
  v.name = std::move(name);
  v.summary = std::move(summary);
  v.params = {block_size_param({block}, block)};
  return v;
}

template <planted_tc::Bug kBug>
Variant mma_pipeline(int id, const char* name, const char* summary) {
  Variant v = test_only(&launch_mma_pipeline<kBug>, "matmul_forward_bf16", id, name, summary, planted_tc::kThreads);
  v.min_compute_capability = 80;
  v.requirements = {{"C % 8 == 0", [](const Shape& s) { return s.C % 8 == 0; }}};
  return v;
}

template <int kFault, bool kDefaultLaunch = false>
Variant flash(int id, const char* name, const char* summary) {
  Variant v = test_only(kDefaultLaunch ? &launch_flash_default<kFault> : &launch_flash<kFault>,
                        "attention_forward_bf16", id, name, summary, kDefaultLaunch ? 128 : kFlashBlock);
  v.numeric = NumericClass::bf16;
  v.min_compute_capability = 80;
  v.requirements = {cuda::flash_attention_forward::head_size_requirement()};
  return v;
}

// Two dk/dv warps (key_tile 32); dq_atomics 0 and 1, or 1 alone.
template <int kFault, bool kAtomicOnly = false>
Variant flash_mma_backward(int id, const char* name, const char* summary) {
  Variant v =
      test_only(&launch_flash_backward<kFault, kAtomicOnly>, "attention_backward_bf16", id, name, summary, 64);
  v.numeric = NumericClass::bf16;
  v.min_compute_capability = 80;
  v.requirements = {cuda::flash_attention_forward::head_size_requirement()};
  if (kAtomicOnly)
    v.params.push_back(TuningParam{"dq_atomics", {1}, 1});
  else
    v.params.push_back(TuningParam{"dq_atomics", {0, 1}, 0});
  v.deterministic = [](const ParamValues& p) { return p.get("dq_atomics") == 0; };
  v.workspace = [](const Shape& s, const ParamValues& p) {
    return cuda::flash_attention_backward_mma::workspace_bytes(s.B, s.T, s.C, s.NH, p.get("dq_atomics") != 0);
  };
  return v;
}

#if WB_EMU || WB_HAVE_CUDNN
// attention_forward_bf16 cuda/3's SDPA call, with O and Stats at the pointers given.
void sdpa_call(const AttentionForwardBf16Args& a, const Launch& l, __nv_bfloat16* o, float* stats) {
  const char* who = "attention_forward_bf16 (planted)";
  const cuda::sdpa::Handle handle = cuda::sdpa::handle(l);
  const cuda::sdpa::Plan& plan =
      cuda::sdpa::plan_for(handle, cuda::stream(l), a.B, a.T, a.C, a.NH, l.workspace_bytes, who);
  cuda::sdpa::execute(handle, plan, cuda::as_cuda(a.qkv), o, stats, a.C, a.C / a.NH, l.workspace);
}

// O one row on.
void launch_sdpa_out_one_row_on(const AttentionForwardBf16Args& a, const Launch& l) {
  sdpa_call(a, l, cuda::as_cuda(a.out) + a.C, a.lse);
}

// Stats written 4 bytes into the workspace (which cuDNN's own part of the bound leaves
// unused under the emulator: its plans need none).
void launch_sdpa_stats_misaligned(const AttentionForwardBf16Args& a, const Launch& l) {
  sdpa_call(a, l, cuda::as_cuda(a.out), reinterpret_cast<float*>(static_cast<unsigned char*>(l.workspace) + 4));
}

// A planted copy of cuda/3: its requirements and workspace, another launch.
Variant sdpa_planted(void (*launch)(const AttentionForwardBf16Args&, const Launch&), int id, const char* name,
                     const char* summary) {
  Variant v = test_only(launch, "attention_forward_bf16", id, name, summary);
  v.numeric = NumericClass::bf16;
  v.requirements = cuda::sdpa::head_size_requirements();
  v.workspace = [](const Shape& s, const ParamValues&) { return cuda::sdpa::workspace_bound(s.B, s.T, s.NH); };
  return v;
}
#endif

// 91 at dq_atomics=0 (the form with a dq kernel and its query tiles), dQ of the last
// query tile then zeroed.
Variant last_query_tile_dq_zeroed() {
  Variant v = flash_mma_backward<cuda::flash_attention_backward_mma::kNone>(
      95, "planted_last_query_tile_dq_zeroed", "test only: 91, then dQ of the rows of the last query tile set to zero");
  v.run = Variant::of(&launch_last_query_tile_dq_zeroed).run;
  v.params.back() = TuningParam{"dq_atomics", {0}, 0};
  return v;
}

template <AcrossBlocks kWhat>
Variant across_blocks(int id, const char* name, const char* summary) {
  Variant v = test_only(&launch_across_blocks<kWhat>, "residual_forward", id, name, summary);
  v.workspace = [](const Shape&, const ParamValues&) { return 2 * sizeof(unsigned); };
  return v;
}

std::vector<Variant> planted() {
  Variant waits = test_only(&launch_waits_for_last, "residual_forward", 93, "planted_waits_for_last",
                            "test only: block 0 waits for the last block");
  waits.workspace = [](const Shape&, const ParamValues&) { return sizeof(int); };
  Variant layout =
      test_only(&launch_assumes_fragment_layout, "matmul_forward", 90, "planted_assumes_fragment_layout",
                "test only: TF32 wmma, the bias added into x[i] of the accumulator at a guessed layout", 32);
  layout.numeric = NumericClass::tf32;
  layout.min_compute_capability = 80;
  Variant faults_at_64 = test_only(&launch_faults_at_64, "residual_forward", 89, "planted_faults_at_64",
                                   "test only: the out-of-bounds write of 90 at block size 64 with unroll 1, correct elsewhere");
  faults_at_64.params = {block_size_param({32, 64, 128}, 32), TuningParam{"unroll", {1, 2}, 1}};
  Variant slot_reuse =
      test_only(&launch_softmax_slot_reuse<false>, "softmax_forward", 90, "ported_slot_reuse",
                "test only: a ladder's block-per-row softmax, one shared slot reused for max and sum", 128);
  Variant exits_early =
      test_only(&launch_softmax_exits_early<false>, "softmax_forward", 91, "ported_exits_early",
                "test only: a ladder's warp-per-row online softmax, returning at threadIdx.x >= V", 128);
  Variant slot_reuse_fixed =
      test_only(&launch_softmax_slot_reuse<true>, "softmax_forward", 92, "ported_slot_reuse_fixed",
                "test only: 90 with a barrier after the maximum's last read", 128);
  Variant exits_early_fixed = test_only(&launch_softmax_exits_early<true>, "softmax_forward", 93,
                                        "ported_exits_early_fixed", "test only: 91 without the early return", 128);
  std::vector<Variant> all{faults_at_64,
          slot_reuse,
          exits_early,
          slot_reuse_fixed,
          exits_early_fixed,
          test_only(&launch_planted_out_of_bounds, "residual_forward", 90, "planted_out_of_bounds",
                    "test only: writes outside its output, which loses the device", 128),
          test_only(&launch_planted_naive, "residual_forward", 91, "planted_naive_again",
                    "test only: the naive port, correct", 128),
          test_only(&launch_strided, "residual_forward", 97, "planted_strided",
                    "test only: correct, but every warp's accesses have a stride of 2 floats (uncoalesced)", 128),
          test_only(&launch_half_warp_turns<true>, "residual_forward", 84, "planted_half_warp_turns",
                    "test only: correct, but the half-warps take turns at the loads and the shared store"),
          test_only(&launch_half_warp_turns<false>, "residual_forward", 83, "planted_half_warps_together",
                    "test only: 84 with both half-warps in the first turn"),
          test_only(&launch_allocates, "residual_forward", 98, "planted_allocates",
                    "test only: correct, but cudaMalloc and cudaFree a scratch buffer on every launch", 128),
          layout,
          test_only(&launch_planted_shared_race, "residual_forward", 92, "planted_shared_race",
                    "test only: claims elements with a racy shared next++"),
          waits,
          across_blocks<AcrossBlocks::atomics_only>(85, "planted_atomics_only",
                                                    "test only: correct, every block adds to one sum atomically"),
          across_blocks<AcrossBlocks::assumes_block_0_first>(
              86, "planted_assumes_block_0_first", "test only: the other blocks assume block 0 started first"),
          across_blocks<AcrossBlocks::zeroes_what_others_add>(
              87, "planted_zeroes_what_others_add", "test only: block 0 zeroes plainly what the others add atomically"),
          across_blocks<AcrossBlocks::last_block_pattern>(
              88, "planted_last_block_pattern", "test only: correct, the block with the last ticket writes the sum"),
          test_only(&launch_planted_exits_before_barrier, "residual_forward", 94, "planted_exits_before_barrier",
                    "test only: threads past the end skip a __syncthreads"),
          test_only(&launch_planted_far_write, "residual_forward", 95, "planted_far_write",
                    "test only: writes 16 KiB past the end of its output"),
          test_only(&launch_planted_reads_past_end, "residual_forward", 96, "planted_reads_past_end",
                    "test only: reads one element past the end of an input"),
          test_only(&launch_planted_bf16_truncates, "residual_forward_bf16", 90, "planted_truncates",
                    "test only: rounds toward zero instead of to nearest even"),
          test_only(&launch_layernorm_bf16<LayernormBug::accumulate_in_bf16>, "layernorm_forward_bf16", 90,
                    "planted_accumulates_in_bf16", "test only: sums the row in bf16"),
          test_only(&launch_layernorm_bf16<LayernormBug::round_twice>, "layernorm_forward_bf16", 91,
                    "planted_rounds_twice", "test only: rounds the normalised value to bf16, then the output"),
          test_only(&launch_fused_normalises_unrounded, "fused_residual_layernorm_forward_bf16", 90,
                    "planted_normalises_unrounded", "test only: statistics of the fp32 sums, not the stored residual"),
          test_only(&launch_adamw_truncates_params, "adamw_bf16", 90, "planted_truncates_params",
                    "test only: parameters rounded toward zero instead of stochastically"),
          test_only(&launch_bias_bf16_rounds_twice, "matmul_backward_bias_bf16", 90, "planted_rounds_twice",
                    "test only: the column sum rounded to bf16, then old + it rounded again"),
          test_only(&launch_bf16_gemm_output, "matmul_forward_bf16", 90, "planted_bf16_gemm_output",
                    "test only: cublasGemmEx into the bf16 out, the bias through beta = 1"),
          mma_pipeline<planted_tc::Bug::none>(91, "planted_mma_pipeline",
                                               "test only: mma.sync, ldmatrix and a two-stage cp.async pipeline, correct"),
          mma_pipeline<planted_tc::Bug::swapped_a_fragment>(92, "planted_swapped_a_fragment",
                                                             "test only: the mma's A fragment with row and column swapped"),
          mma_pipeline<planted_tc::Bug::reads_before_wait>(93, "planted_reads_before_wait",
                                                            "test only: reads a pipeline stage before its cp.async wait"),
          mma_pipeline<planted_tc::Bug::row_one_off>(94, "planted_row_one_off",
                                                      "test only: ldmatrix row addresses of A one row off"),
          mma_pipeline<planted_tc::Bug::missing_barrier>(
              95, "planted_missing_barrier", "test only: no __syncthreads between a stage's refill and its compute"),
          mma_pipeline<planted_tc::Bug::refill_before_barrier>(
              96, "planted_refill_before_barrier",
              "test only: a stage refilled before the barrier that ends the other warp's reads of it"),
          mma_pipeline<planted_tc::Bug::no_odd_column_guard>(
              97, "planted_no_odd_column_guard", "test only: the epilogue guards a pair of columns by its first"),
          flash<cuda::flash_attention_forward::kNone>(
              91, "planted_flash_mma", "test only: attention_forward_bf16 cuda/4's kernel at 32 x 16 tiles, correct"),
          flash<cuda::flash_attention_forward::kDiagonalTileSkipped>(
              92, "planted_diagonal_tile_skipped", "test only: a warp skips the key tile that holds its diagonal"),
          flash<cuda::flash_attention_forward::kNoRescale>(
              93, "planted_no_rescale", "test only: the running output not rescaled when the row max grows"),
          flash<cuda::flash_attention_forward::kPFragmentMisplaced>(
              94, "planted_p_fragment_misplaced", "test only: P's A fragment with registers 1 and 2 swapped"),
          flash<cuda::flash_attention_forward::kReadsBeforeWait>(
              95, "planted_reads_before_wait", "test only: a key tile read before its cp.async wait"),
          flash<cuda::flash_attention_forward::kRefillBeforeBarrier, true>(
              96, "planted_refill_before_barrier",
              "test only: cuda/4's default launch with each refill issued before the barrier that ends the other "
              "warps' reads of its buffer"),
          flash_mma_backward<cuda::flash_attention_backward_mma::kNone>(
              91, "planted_flash_mma_backward",
              "test only: attention_backward_bf16 cuda/3's kernels at key_tile 32, query_tile 16, correct"),
          flash_mma_backward<cuda::flash_attention_backward_mma::kDqWithoutAtomics, true>(
              92, "planted_dq_without_atomics",
              "test only: dQ added into the fp32 accumulator with a plain read-add-write, no atomicAdd"),
          flash_mma_backward<cuda::flash_attention_backward_mma::kDiagonalTileSkipped>(
              93, "planted_diagonal_query_tile_skipped",
              "test only: the dk/dv blocks start one query tile late, past their diagonal"),
          flash_mma_backward<cuda::flash_attention_backward_mma::kReadsBeforeWait>(
              94, "planted_backward_reads_before_wait", "test only: a query stage read before its cp.async wait"),
          last_query_tile_dq_zeroed()};
#if WB_EMU || WB_HAVE_CUDNN
  all.push_back(sdpa_planted(&launch_sdpa_out_one_row_on, 97, "planted_sdpa_out_one_row_on",
                             "test only: cuda/3's cuDNN SDPA call with O one row past out"));
  all.push_back(sdpa_planted(&launch_sdpa_stats_misaligned, 98, "planted_sdpa_stats_misaligned",
                             "test only: cuda/3's cuDNN SDPA call with Stats 4 bytes into the workspace"));
#endif
  return all;
}

}  // namespace
}  // namespace wb::variants

// One name per compilation, outside the namespaces the shim renames.
#if defined(WB_EMU)
std::vector<wb::Variant> planted_emu_variants() { return wb::variants::planted(); }
#else
std::vector<wb::Variant> planted_cuda_variants() { return wb::variants::planted(); }
#endif
