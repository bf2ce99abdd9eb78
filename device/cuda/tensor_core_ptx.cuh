#pragma once
// The tensor-core instructions that wb's hand-written bf16 GEMMs issue below WMMA, each
// one device function: inline PTX under nvcc (sm_80 and newer), a lane-by-lane model
// under the emulator (emu/tensor_core_instructions.h, with the same signatures), so that a
// variant is written once and runs, checked, on a machine without a GPU.
//
//   mma_m16n8k16_bf16(d, a, b, c)
//       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: D (16x8) = A (16x16, row)
//       * B (16x8, col) + C, in fp32. Warp-collective: all 32 lanes. Per lane, with
//       g = lane >> 2 and t = lane % 4 (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
//       floating point type"):
//         a[4]  8 bf16, two per register, low half first: a[0] = A[g][2t..2t+1],
//               a[1] = A[g+8][2t..2t+1], a[2] = A[g][2t+8..2t+9], a[3] = A[g+8][2t+8..2t+9]
//         b[2]  4 bf16: b[0] = B[2t..2t+1][g], b[1] = B[2t+8..2t+9][g]
//         c, d  4 floats: {C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1]}
//   ldmatrix_x1/x2/x4(r, row)  and  ..._trans
//       ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16: n 8x8 matrices of 16-bit
//       elements from shared memory. Lanes 8j..8j+7 give the addresses of the 8 rows of
//       matrix j (each row 16 contiguous bytes, 16-byte aligned; the lanes past the
//       matrices loaded give none that is read). Lane l receives in r[j] the two elements
//       of matrix j at row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 (low half first);
//       with .trans, those at rows 2 (l % 4) and 2 (l % 4) + 1 of column l / 4.
//       Warp-collective: all 32 lanes.
//   cp_async_ca<Bytes>(dst, src, src_bytes = Bytes)   Bytes 4, 8 or 16
//   cp_async_cg<Bytes>(dst, src, src_bytes = Bytes)   Bytes 16 only (PTX's rule)
//       cp.async.{ca,cg}.shared.global: an asynchronous copy of Bytes bytes from global
//       to shared memory, dst and src aligned to Bytes; only the first src_bytes
//       (0..Bytes) are read and the rest of dst is zero-filled (the src-size form, for
//       the edges of a tile). The copy is complete only after the wait for its group.
//   cp_async_commit()      cp.async.commit_group: the copies issued since the last
//                          commit form one group
//   cp_async_wait<N>()     cp.async.wait_group N: all but the N most recent groups done
//   cp_async_wait_all()    cp.async.wait_all: every copy done
//   cp_async_wait_pending(n)  cp_async_wait<n>() for a run-time n of 0..2 (a pipeline's
//                          depth as a launch parameter); the same under both builds
// A wait makes the copies visible to the thread that issued them only: the other threads
// of the block read a stage after a __syncthreads() that follows the wait.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#if WB_EMU
#include "emu/tensor_core_instructions.h"
#else

namespace wb::cuda::tc {

// Two bf16 packed into one 32-bit register, `lo` in the low half (the element of the
// lower column or row index in the fragment layouts above).
__device__ inline uint32_t pack_bf16x2(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  const uint32_t l = __bfloat16_as_ushort(lo), h = __bfloat16_as_ushort(hi);
  return l | (h << 16);
}

__device__ inline void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                         const float (&c)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]));
#else
  __trap();
#endif
}

namespace detail {
__device__ inline uint32_t shared_address(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }
}  // namespace detail

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define WB_TC_LDMATRIX(name, count, suffix, outs, ...)                                                \
  __device__ inline void name(uint32_t (&r)[count], const void* row) {                               \
    asm volatile("ldmatrix.sync.aligned.m8n8.x" #count suffix ".shared.b16 " outs ", [%" #count "];\n" \
                 : __VA_ARGS__                                                                        \
                 : "r"(detail::shared_address(row)));                                                 \
  }
#else
#define WB_TC_LDMATRIX(name, count, suffix, outs, ...) \
  __device__ inline void name(uint32_t (&r)[count], const void*) { __trap(); }
#endif
WB_TC_LDMATRIX(ldmatrix_x1, 1, "", "{%0}", "=r"(r[0]))
WB_TC_LDMATRIX(ldmatrix_x2, 2, "", "{%0, %1}", "=r"(r[0]), "=r"(r[1]))
WB_TC_LDMATRIX(ldmatrix_x4, 4, "", "{%0, %1, %2, %3}", "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]))
WB_TC_LDMATRIX(ldmatrix_x1_trans, 1, ".trans", "{%0}", "=r"(r[0]))
WB_TC_LDMATRIX(ldmatrix_x2_trans, 2, ".trans", "{%0, %1}", "=r"(r[0]), "=r"(r[1]))
WB_TC_LDMATRIX(ldmatrix_x4_trans, 4, ".trans", "{%0, %1, %2, %3}", "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]))
#undef WB_TC_LDMATRIX

namespace detail {
// cp.async with either cache operator: .ca (cached in L1 and L2) or .cg (L2 only); the
// two public names below say which and check the sizes PTX allows for it.
template <bool kCg, int Bytes>
__device__ inline void cp_async(void* dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kCg)
    asm volatile("cp.async.cg.shared.global [%0], [%1], %2, %3;\n" ::"r"(shared_address(dst)), "l"(src), "n"(Bytes),
                 "r"(src_bytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(shared_address(dst)), "l"(src), "n"(Bytes),
                 "r"(src_bytes)
                 : "memory");
#else
  __trap();
#endif
}
}  // namespace detail

template <int Bytes>
__device__ inline void cp_async_ca(void* dst, const void* src, int src_bytes = Bytes) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async.ca copies 4, 8 or 16 bytes");
  detail::cp_async<false, Bytes>(dst, src, src_bytes);
}

template <int Bytes>
__device__ inline void cp_async_cg(void* dst, const void* src, int src_bytes = Bytes) {
  static_assert(Bytes == 16, "cp.async.cg copies 16 bytes only");
  detail::cp_async<true, Bytes>(dst, src, src_bytes);
}

__device__ inline void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ inline void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

__device__ inline void cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

}  // namespace wb::cuda::tc

#endif  // WB_EMU

namespace wb::cuda::tc {

// cp_async_wait<N>() for a pipeline whose depth is a launch parameter: wait until at most
// `pending` (0, 1 or 2) groups are still in flight. wait_group takes an immediate, so the
// run-time count picks one of the instantiations; it is the same for the whole grid.
__device__ inline void cp_async_wait_pending(int pending) {
  switch (pending) {
    case 0:
      cp_async_wait<0>();
      break;
    case 1:
      cp_async_wait<1>();
      break;
    default:
      cp_async_wait<2>();
      break;
  }
}

}  // namespace wb::cuda::tc
