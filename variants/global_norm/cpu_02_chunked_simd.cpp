// global_norm, CPU variant 2: fixed chunks summed in float SIMD lanes, chunks added in
// double in chunk order.
//
// Idea: the N gradients are cut into chunks of 2048; threads (`threads` of them) take
// contiguous runs of chunks. A chunk's sum of squares is one SIMD reduction in float
// lanes, converted to double and written to the workspace; once every chunk is done,
// one thread adds the chunk sums in order and takes the square root.
// Why it should beat variant 1: the reference converts every gradient to double and
// adds it to a scalar; here four (SSE) squares are added per instruction and the only
// double work is one addition per chunk.
// Determinism: the chunks are fixed by N, not by the thread count, and are added in
// chunk order, so every thread count gives the same bits (the reference's OpenMP
// reduction adds its per-thread sums in an order the runtime picks).
// Accuracy: a chunk adds at most 512 squares per lane in float, a relative error
// under 3e-5 in the worst case and about 1e-6 typically; the chunks add in double.
// The op's tolerance on the norm is 1e-4 relative.
// Limits: workspace of one double per chunk (N / 256 bytes); memory-bound at large N.
#include <cmath>

#include "contract/ops/global_norm.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/global_norm/chunked_squares.h"

namespace wb::variants {
namespace {

void global_norm_chunked(const GlobalNormArgs& a, const Launch& l) {
  const double total =
      cpu::chunked_squares::sum_of_squares(a.grads, a.N, static_cast<double*>(l.workspace), cpu::threads(l));
  a.out[0] = float(std::sqrt(total));
}

}  // namespace

Variant global_norm_cpu_2() {
  Variant v = cpu::threaded(&global_norm_chunked,
                            "chunks of 2048 squared in float SIMD lanes, chunk sums added in double in order");
  v.workspace = [](const Shape& s, const ParamValues&) { return cpu::chunked_squares::workspace_bytes(s.N); };
  return v;
}

}  // namespace wb::variants
