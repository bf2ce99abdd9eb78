// layernorm_backward, CUDA variant 4: variant 3's row kernel, finished with atomics.
//
// Idea: the same float4 warp-per-row kernel as variant 3 (rows in registers, running
// per-lane dweight/dbias sums, warps combined in shared memory in warp order), but each
// block adds its sums straight to dweight and dbias with float atomicAdd: no
// workspace, no second kernel.
// Why: the fair non-deterministic counterpart of variant 3 -- the difference between
// the two is exactly the price of determinism (kernel 2 and the partials' round trip
// through L2), which is what the sweep should show.
// Limits: float atomics make dweight/dbias differ in the last bits from run to run
// (not deterministic); G * 2C atomics contend on the same 2C addresses, G blocks deep.
// C % 4 == 0 and C <= 1024, as variant 3.
#include <string>

#include "contract/ops/layernorm_backward.h"
#include "device/cuda/runtime.h"
#include "variants/layernorm_backward/common.cuh"

namespace wb::variants {
namespace {

using layernorm_backward_detail::kMaxC;

void launch(const LayernormBackwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  const int rows_per_warp = l.get("rows_per_warp");
  const int64_t blocks = layernorm_backward_detail::row_blocks(int64_t(a.B) * a.T, block, rows_per_warp);
  layernorm_backward_detail::launch_rows<true>(a, nullptr, unsigned(blocks), block, rows_per_warp, cuda::stream(l));
}

}  // namespace

Variant layernorm_backward_cuda_4() {
  Variant v = Variant::of(&launch);
  v.summary = "variant 3's float4 row kernel, block sums added to dweight/dbias with atomics (no workspace)";
  v.params = {block_size_param(), TuningParam{"rows_per_warp", {1, 2, 4, 8, 16}, 4}};
  v.deterministic = [](const ParamValues&) { return false; };  // float atomicAdd: the order of the adds varies
  v.requirements = {{"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }},
                    {"C <= " + std::to_string(kMaxC), [](const Shape& s) { return s.C <= kMaxC; }}};
  return v;
}

}  // namespace wb::variants
