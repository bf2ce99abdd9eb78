// matmul_forward, CUDA variant 3: 2D register blocking.
//
// Idea: a block owns a tile x tile tile of out and each thread a TM x TM sub-tile of
// it, kept in registers. The block walks C in steps of tile_k: it stages a
// tile x tile_k slab of inp and one of weight in shared memory (laid out as in global
// memory, k contiguous, padded by one), and for every k each thread reads TM values of
// the inp slab and TM of the weight slab into registers and does the TM x TM outer
// product. A thread's rows and columns are strided by the number of threads along a
// side (row ty + i*side, column tx + j*side), so that the threads of a warp read
// different banks and store neighbouring columns.
// Why it should beat variant 2: each value read from shared memory now feeds TM
// multiply-adds instead of one (2*TM shared loads for TM*TM FMAs: 8x fewer at TM=8),
// and the block tile is larger, so every global load serves more outputs.
// Parameters: block_size (64, 256, 1024 threads, a square of 8, 16, 32) with tile
// (64 or 128) gives TM = tile / sqrt(block_size); TM = 4 and 8 are instantiated, the
// other combinations are skipped. tile_k (8 or 16) is the depth of a slab.
// The kernel lives in variants/matmul/matmul_register_tiles.cuh, shared with
// matmul_gelu_forward cuda/2.
// Limits: scalar global loads (tile_k floats in a row: short coalesced runs) and a
// single buffer: the loads of the next slab wait behind the math of this one; the
// strided smem reads of the k-contiguous layout are scalar. Any shape runs: partial
// tiles at the edges of B*T, OC and C are zero-filled and masked.
#include "contract/ops/matmul_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/matmul/matmul.cuh"
#include "variants/matmul/matmul_register_tiles.cuh"

namespace wb::variants {
namespace {

// Each output: the dot product plus the bias (none when it is null).
struct StoreWithBias {
  float* out;
  const float* bias;
  int OC;
  __device__ void operator()(int r, int o, float acc) const {
    out[int64_t(r) * OC + o] = acc + (bias ? bias[o] : 0.0f);
  }
};

void launch(const MatmulForwardArgs& a, const Launch& l) {
  cuda::register_tiles::launch(StoreWithBias{a.out, a.bias, a.OC}, a.inp, a.weight, a.B * a.T, a.C, a.OC, l);
}

}  // namespace

Variant matmul_forward_cuda_3() {
  return cuda::register_tiles::variant(
      &launch, "tile x tile outputs per block, a TM x TM register tile per thread (outer products from shared memory)");
}

}  // namespace wb::variants
