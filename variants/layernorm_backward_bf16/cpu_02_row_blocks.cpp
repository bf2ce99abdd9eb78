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
// arithmetic (device/cpu/bf16_lanes.h).
// Why it should beat the reference port: the port runs double arithmetic element by
// element and reads inp and dout a second time down the columns (stride C) for
// dweight and dbias; here each row is read once, contiguously, in vector lanes.
// Determinism: the blocks are fixed by the shape, not by the thread count, and their
// partials are added in block order: every thread count gives the same bits.
// Accuracy: a block's partials add 16 rows in fp32; blocks add in double.
// Measure: OMP_NUM_THREADS=1 build/wb run layernorm_backward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768
// for N = 1, 2 and layernorm_backward --variant 2 (figures:
// results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: workspace of 2 C floats per block of rows (98 KB at B*T=256, C=768).
#include "contract/ops/layernorm_backward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/layernorm/layernorm_backward_blocks.h"

namespace wb::variants {

Variant layernorm_backward_bf16_cpu_2() {
  Variant v = cpu::threaded(&cpu::layernorm_backward::row_blocks_backward<LayernormBackwardBf16Args>,
                            "one fp32 SIMD pass per row (bf16 widened by shifts) for dinp and blocks' dweight/dbias "
                            "partials, added in block order, each gradient rounded once");
  v.workspace = [](const Shape& s, const ParamValues&) { return cpu::layernorm_backward::workspace_bytes(s); };
  return v;
}

}  // namespace wb::variants
