#pragma once
// Packed128<T>: 16 bytes of T -- 8 bf16 or 4 floats -- moved with one 128-bit load or
// store per thread, the widest a thread can issue. The address must be 16-byte aligned
// (the emulator checks it: a misaligned one faults, as on a GPU).
//   load128 / store128        the default caching
//   load128_stream / store128_stream   evict-first (__ldcs/__stcs): data touched once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "base/bf16.h"

namespace wb::cuda {

template <class T>
struct alignas(16) Packed128 {
  static constexpr int kSize = 16 / int(sizeof(T));
  static_assert(16 % sizeof(T) == 0, "a whole number of elements in 16 bytes");
  T v[kSize];
  __device__ T& operator[](int i) { return v[i]; }
  __device__ const T& operator[](int i) const { return v[i]; }
};

namespace detail {
template <class P>
__device__ inline P from_int4(int4 bits) {
  P p;
  static_assert(sizeof(P) == sizeof(int4), "16 bytes");
  memcpy(&p, &bits, sizeof p);
  return p;
}
template <class P>
__device__ inline int4 to_int4(const P& p) {
  int4 bits;
  memcpy(&bits, &p, sizeof bits);
  return bits;
}
}  // namespace detail

template <class T>
__device__ inline Packed128<T> load128(const T* p) {
  return detail::from_int4<Packed128<T>>(__ldcg(reinterpret_cast<const int4*>(p)));
}
template <class T>
__device__ inline Packed128<T> load128_stream(const T* p) {
  return detail::from_int4<Packed128<T>>(__ldcs(reinterpret_cast<const int4*>(p)));
}
template <class T>
__device__ inline void store128(T* p, const Packed128<T>& v) {
  __stcg(reinterpret_cast<int4*>(p), detail::to_int4(v));
}
template <class T>
__device__ inline void store128_stream(T* p, const Packed128<T>& v) {
  __stcs(reinterpret_cast<int4*>(p), detail::to_int4(v));
}

// Element access for kernels templated on their storage (float or __nv_bfloat16): the
// value widened to fp32, and an fp32 value rounded to the storage (to nearest even).
__device__ inline float widen(float x) { return x; }
__device__ inline float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T>
__device__ inline T narrow(float x);
template <>
__device__ inline float narrow<float>(float x) {
  return x;
}
template <>
__device__ inline __nv_bfloat16 narrow<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

// A wb::bf16 tensor pointer (the argument structs' type) as CUDA's bf16.
__host__ __device__ inline __nv_bfloat16* as_cuda(bf16* p) { return reinterpret_cast<__nv_bfloat16*>(p); }
__host__ __device__ inline const __nv_bfloat16* as_cuda(const bf16* p) {
  return reinterpret_cast<const __nv_bfloat16*>(p);
}

}  // namespace wb::cuda
