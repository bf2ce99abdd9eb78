// matmul_gelu_forward, CUDA variant 2: matmul_forward cuda/3's register tiles, the
// bias and the GELU applied as each output leaves its register.
//
// Idea: the 2D register-blocked kernel of variants/matmul/matmul_register_tiles.cuh
// (tile x tile outputs per block, a TM x TM tile per thread, slabs of tile_k channels
// staged in shared memory), whose store writes acc + bias to pre and its GELU
// (gelu_forward's tanhf formula) to out.
// Why it should beat variant 1: everything matmul_forward cuda/3 gains over cuda/1
// (each shared-memory value feeds TM multiply-adds), and against matmul_forward cuda/3
// followed by gelu_forward it saves a launch and a read of pre back from memory.
// Parameters: as matmul_forward cuda/3 (block_size, tile, tile_k; 4x4 and 8x8 thread
// tiles are built, the other combinations are skipped).
// Limits: as matmul_forward cuda/3: scalar global loads, a single slab buffer; the
// epilogue's stores of pre and out are strided by the threads along a side, as that
// kernel's stores of out are. Any shape runs.
#include "contract/ops/matmul_gelu_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"
#include "variants/matmul/matmul.cuh"
#include "variants/matmul/matmul_register_tiles.cuh"

namespace wb::variants {
namespace {

// Each output: pre = the dot product plus the bias, out = gelu(pre).
struct StoreBiasGelu {
  float* out;
  float* pre;
  const float* bias;
  int OC;
  __device__ void operator()(int r, int o, float acc) const {
    const int64_t i = int64_t(r) * OC + o;
    const float p = acc + (bias ? bias[o] : 0.0f);
    pre[i] = p;
    out[i] = cuda::gelu::gelu(p);
  }
};

void launch(const MatmulGeluForwardArgs& a, const Launch& l) {
  cuda::register_tiles::launch(StoreBiasGelu{a.out, a.pre, a.bias, a.OC}, a.inp, a.weight, a.B * a.T, a.C, a.OC, l);
}

}  // namespace

Variant matmul_gelu_forward_cuda_2() {
  return cuda::register_tiles::variant(
      &launch, "matmul_forward cuda/3's register tiles; bias and GELU applied as each output is stored (pre and out)");
}

}  // namespace wb::variants
