// encoder_forward, CUDA variant 3: 128-bit loads and stores, one float4 per thread.
//
// Idea: as variant 2, but thread i owns four consecutive channels: it reads them from
// the token's wte row and the position's wpe row with one 128-bit load each and
// writes their sum with one 128-bit streaming store (the output is not read again
// by this op, so it is marked evict-first and leaves L2 to the reused wpe rows).
// The index arithmetic runs in 32 bits whenever B*T*C/4 < 2^31 (always for GPT-2
// shapes), in 64 bits otherwise.
// Why it should beat variant 2: a quarter of the memory instructions and of the
// index arithmetic (the division by C/4 is per four elements), and wider
// transactions in flight per thread -- the op is pure data movement, so this is what
// brings it to the copy bandwidth.
// Limits: C % 4 == 0 (every row starts 16-byte aligned; the launcher also checks the
// base pointers); wte rows are gathered, so repeated tokens only help through L2.
#include <cstdint>
#include <stdexcept>

#include "contract/ops/encoder_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

// Index: uint32_t when n4 < 2^31 (so that blockIdx.x * blockDim.x + threadIdx.x of
// the last block cannot wrap), uint64_t otherwise.
template <typename Index>
__global__ void encoder_vec4(float* out, const int32_t* inp, const float* wte, const float* wpe, Index n4, Index T,
                             Index vecs_per_row) {
  const Index i = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);  // float4 index into out
  if (i >= n4) return;
  const Index bt = i / vecs_per_row;
  const Index v = i - bt * vecs_per_row;  // float4 index within the row
  const Index t = bt % T;
  const float4 w = cuda::load4(wte + (size_t(inp[bt]) * vecs_per_row + v) * 4);
  const float4 p = cuda::load4(wpe + (size_t(t) * vecs_per_row + v) * 4);
  cuda::store4_stream(out + size_t(i) * 4, make_float4(w.x + p.x, w.y + p.y, w.z + p.z, w.w + p.w));
}

void launch(const EncoderForwardArgs& a, const Launch& l) {
  cuda::require_aligned16("encoder_forward cuda/3", {a.out, a.wte, a.wpe});
  const int64_t vecs_per_row = a.C / 4;
  const int64_t n4 = int64_t(a.B) * a.T * vecs_per_row;
  const int block = l.block_size();
  const unsigned grid = cuda::grid_for(n4, block);
  if (n4 < (int64_t(1) << 31)) {
    WB_LAUNCH(encoder_vec4<uint32_t>, grid, block, 0, cuda::stream(l), a.out, a.inp, a.wte, a.wpe, uint32_t(n4),
              uint32_t(a.T), uint32_t(vecs_per_row));
  } else {
    WB_LAUNCH(encoder_vec4<uint64_t>, grid, block, 0, cuda::stream(l), a.out, a.inp, a.wte, a.wpe, uint64_t(n4),
              uint64_t(a.T), uint64_t(vecs_per_row));
  }
}

}  // namespace

Variant encoder_forward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary = "one float4 per thread: 128-bit loads of wte and wpe, 128-bit streaming stores";
  v.params = {block_size_param()};
  v.requirements = {{"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }}};
  return v;
}

}  // namespace wb::variants
