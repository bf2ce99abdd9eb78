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
#include "contract/ops/layernorm_backward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/layernorm/layernorm_backward_blocks.h"

namespace wb::variants {

Variant layernorm_backward_cpu_2() {
  Variant v = cpu::threaded(&cpu::layernorm_backward::row_blocks_backward<LayernormBackwardArgs>,
                            "one SIMD pass per row for dinp and blocks' dweight/dbias partials, added in block order");
  v.workspace = [](const Shape& s, const ParamValues&) { return cpu::layernorm_backward::workspace_bytes(s); };
  return v;
}

}  // namespace wb::variants
