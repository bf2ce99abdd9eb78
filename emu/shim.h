#pragma once
// The CUDA surface the variants use, for the host compiler (WB_EMU builds): the
// qualifiers, the builtin variables, vector types, barriers, warp collectives,
// atomics, intrinsics and the runtime calls, each mapped onto the emulator
// (emu/emu.h). emu/include/ holds cuda_runtime.h and friends, which
// include this file, so a variant's `#include <cuda_runtime.h>` works unchanged.
//
// Everything lives in an inline namespace, wb::emu_build: the variants' own
// `namespace wb::variants { ... }` and device/cuda's `namespace wb::cuda` then open
// wb::emu_build::variants and wb::emu_build::cuda, so that one binary can hold a
// variant compiled by nvcc and the same variant compiled for the emulator without a
// clash of names. (A namespace-definition finds a namespace of an inline namespace
// and extends it.)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "emu/emu.h"

#ifndef WB_EMU
#define WB_EMU 1
#endif

namespace wb {
inline namespace emu_build {
namespace variants {}
namespace cuda {}
}  // namespace emu_build
}  // namespace wb

// ---------------------------------------------------------------------------------
// Qualifiers

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
// __shared__ is deliberately undefined: shared memory is declared through
// WB_SHARED / WB_DYNAMIC_SHARED (device/cuda/dialect.cuh), so that every block gets
// its own checked copy.

#define WB_EMU_SITE \
  ::wb::emu::Site { __FILE__, __LINE__ }

// The builtin variables of the calling thread.
#define threadIdx (::wb::emu::builtins().thread_idx)
#define blockIdx (::wb::emu::builtins().block_idx)
#define blockDim (::wb::emu::builtins().block_dim)
#define gridDim (::wb::emu::builtins().grid_dim)
#define warpSize 32

namespace wb {
inline namespace emu_build {

// ---------------------------------------------------------------------------------
// Vector types

using uint3 = ::wb::emu::Dim3;

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(::wb::emu::Dim3 d) : x(d.x), y(d.y), z(d.z) {}
  constexpr operator ::wb::emu::Dim3() const { return {x, y, z}; }
};

struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) int2 {
  int x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};

inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

// ---------------------------------------------------------------------------------
// Device functions of the CUDA math library that the host library lacks

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
// The reinterpreting casts: a value's bits read as another type of the same size.
template <class To, class From>
inline To bits_as(From from) {
  static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the size");
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}
inline float __int_as_float(int i) { return bits_as<float>(i); }
inline int __float_as_int(float f) { return bits_as<int>(f); }
inline unsigned __float_as_uint(float f) { return bits_as<unsigned>(f); }
inline float __uint_as_float(unsigned i) { return bits_as<float>(i); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(unsigned x) { return __builtin_ffs(int(x)); }
inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }

// CUDA's min and max overloads for integers and floats (device code calls them
// unqualified).
template <class A, class B>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(a) < C(b) ? C(a) : C(b);
}
template <class A, class B>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(a) < C(b) ? C(b) : C(a);
}

// Cache-hinted loads and stores: plain accesses here, with the GPU's alignment rule
// for vector types (float2, float4) checked.
template <class T>
inline void check_vector_alignment(const T* p) {
  if constexpr (alignof(T) > 4) ::wb::emu::check_aligned(p, alignof(T));
}
template <class T>
inline T __ldg(const T* p) {
  check_vector_alignment(p);
  return *p;
}
template <class T>
inline T __ldcs(const T* p) {
  check_vector_alignment(p);
  return *p;
}
template <class T>
inline T __ldcg(const T* p) {
  check_vector_alignment(p);
  return *p;
}
template <class T>
inline void __stcs(T* p, T v) {
  check_vector_alignment(p);
  *p = v;
}
template <class T>
inline void __stcg(T* p, T v) {
  check_vector_alignment(p);
  *p = v;
}

// ---------------------------------------------------------------------------------
// Atomics (their return value is the old value, as in CUDA)

inline float atomicAdd(float* p, float v) { return ::wb::emu::atomic_add(p, v); }
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
inline T atomicAdd(T* p, T v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
inline T atomicSub(T* p, T v) {
  return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
}
template <class T>
inline T atomicExch(T* p, T v) {
  return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
template <class T>
inline T atomicCAS(T* p, T expected, T desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
inline T atomicMax(T* p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
inline T atomicMin(T* p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

}  // namespace emu_build
}  // namespace wb

// ---------------------------------------------------------------------------------
// Barriers and warp collectives: call objects made at the call site (which they
// remember for messages), then called with CUDA's arguments.

namespace wb::emu {

struct SyncThreadsAt {
  Site site;
  void operator()() const { syncthreads(site); }
};

struct SyncWarpAt {
  Site site;
  void operator()(unsigned mask = 0xffffffffu) const { syncwarp(site, mask); }
};

template <Exchange kKind>
struct ShuffleAt {
  Site site;
  template <class T>
  T operator()(unsigned mask, T value, int arg, int width = 32) const {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffles move values of up to 8 bytes");
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    bits = shuffle(site, mask, bits, kKind, arg, width);
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
  }
};

struct BallotAt {
  Site site;
  unsigned operator()(unsigned mask, int predicate) const { return ballot(site, mask, predicate != 0); }
};
struct AnyAt {
  Site site;
  int operator()(unsigned mask, int predicate) const { return ballot(site, mask, predicate != 0) != 0; }
};
struct AllAt {
  Site site;
  int operator()(unsigned mask, int predicate) const { return ballot(site, mask, predicate != 0) == mask; }
};

struct ActiveMaskAt {
  Site site;
  unsigned operator()() const { return active_mask(site); }
};

template <class T>
uint64_t match_bits(T value) {
  static_assert((sizeof(T) == 4 || sizeof(T) == 8) && std::is_trivially_copyable_v<T>,
                "warp match compares 32- or 64-bit values");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
struct MatchAnyAt {
  Site site;
  template <class T>
  unsigned operator()(unsigned mask, T value) const {
    return match_any(site, mask, match_bits(value));
  }
};
struct MatchAllAt {
  Site site;
  template <class T>
  unsigned operator()(unsigned mask, T value, int* predicate) const {
    return match_all(site, mask, match_bits(value), predicate);
  }
};

struct TrapAt {
  Site site;
  [[noreturn]] void operator()() const { trap(site, "__trap()"); }
};

}  // namespace wb::emu

// Each intrinsic is a callable made at its call, so that it carries the caller's site.
#define WB_EMU_AT(Callable) \
  ::wb::emu::Callable { WB_EMU_SITE }
#define __syncthreads WB_EMU_AT(SyncThreadsAt)
#define __syncwarp WB_EMU_AT(SyncWarpAt)
#define __shfl_sync WB_EMU_AT(ShuffleAt<::wb::emu::Exchange::index>)
#define __shfl_xor_sync WB_EMU_AT(ShuffleAt<::wb::emu::Exchange::bxor>)
#define __shfl_up_sync WB_EMU_AT(ShuffleAt<::wb::emu::Exchange::up>)
#define __shfl_down_sync WB_EMU_AT(ShuffleAt<::wb::emu::Exchange::down>)
#define __ballot_sync WB_EMU_AT(BallotAt)
#define __any_sync WB_EMU_AT(AnyAt)
#define __all_sync WB_EMU_AT(AllAt)
#define __activemask WB_EMU_AT(ActiveMaskAt)
#define __match_any_sync WB_EMU_AT(MatchAnyAt)
#define __match_all_sync WB_EMU_AT(MatchAllAt)
#define __trap WB_EMU_AT(TrapAt)

// ---------------------------------------------------------------------------------
// The runtime calls the variants make

namespace wb {
inline namespace emu_build {

enum cudaError_t : int {
  cudaSuccess = ::wb::emu::kSuccess,
  cudaErrorInvalidValue = ::wb::emu::kInvalidValue,
  cudaErrorMemoryAllocation = ::wb::emu::kMemoryAllocation,
  cudaErrorInvalidConfiguration = ::wb::emu::kInvalidConfiguration,
  cudaErrorInvalidDeviceFunction = ::wb::emu::kInvalidDeviceFunction,
  cudaErrorIllegalAddress = ::wb::emu::kIllegalAddress,
  cudaErrorLaunchOutOfResources = ::wb::emu::kLaunchOutOfResources,
  cudaErrorMisalignedAddress = ::wb::emu::kMisalignedAddress,
  cudaErrorLaunchFailure = ::wb::emu::kLaunchFailure,
  cudaErrorNotSupported = ::wb::emu::kNotSupported,
};

struct CUstream_st;
using cudaStream_t = CUstream_st*;

inline cudaError_t cudaGetLastError() { return cudaError_t(::wb::emu::last_error(true)); }
inline cudaError_t cudaPeekAtLastError() { return cudaError_t(::wb::emu::last_error(false)); }
inline const char* cudaGetErrorName(cudaError_t e) { return ::wb::emu::error_name(e); }
inline const char* cudaGetErrorString(cudaError_t e) {
  static thread_local std::string text;
  text = ::wb::emu::error_string(e);
  return text.c_str();
}
// Inside a CUDA-graph capture (emu/emu.h) a synchronisation, an allocation, a free and
// every copy but an asynchronous device-to-device one throw CaptureError, naming the call.
inline constexpr const char* kCapturedSyncWhy = "a captured step may not synchronise (it runs as one graph)";
inline cudaError_t cudaDeviceSynchronize() {
  ::wb::emu::refuse_in_capture("cudaDeviceSynchronize", kCapturedSyncWhy);
  return cudaError_t(::wb::emu::sticky_error());
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) {
  ::wb::emu::refuse_in_capture("cudaStreamSynchronize", kCapturedSyncWhy);
  return cudaError_t(::wb::emu::sticky_error());
}

// Events order nothing in the emulator (its stream runs in order); only their
// synchronisation means something here, and a capture refuses it.
struct CUevent_st {
  int unused = 0;
};
using cudaEvent_t = CUevent_st*;
inline cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = new CUevent_st;
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = nullptr) { return cudaError_t(::wb::emu::sticky_error()); }
inline cudaError_t cudaEventSynchronize(cudaEvent_t) {
  ::wb::emu::refuse_in_capture("cudaEventSynchronize", kCapturedSyncWhy);
  return cudaError_t(::wb::emu::sticky_error());
}

inline cudaError_t emu_allocate(void** p, std::size_t bytes, const char* call) {
  ::wb::emu::refuse_in_capture(call, "a captured step may not allocate (allocate before the capture and reuse the buffers)");
  if (const int sticky = ::wb::emu::sticky_error()) return cudaError_t(sticky);
  try {
    *p = ::wb::emu::device_malloc(bytes);
  } catch (const std::bad_alloc&) {
    return cudaErrorMemoryAllocation;
  }
  return cudaSuccess;
}
inline cudaError_t cudaMalloc(void** p, std::size_t bytes) { return emu_allocate(p, bytes, "cudaMalloc"); }
template <class T>
inline cudaError_t cudaMalloc(T** p, std::size_t bytes) {
  return emu_allocate(reinterpret_cast<void**>(p), bytes, "cudaMalloc");
}
inline cudaError_t cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t) {
  return emu_allocate(p, bytes, "cudaMallocAsync");
}
template <class T>
inline cudaError_t cudaMallocAsync(T** p, std::size_t bytes, cudaStream_t) {
  return emu_allocate(reinterpret_cast<void**>(p), bytes, "cudaMallocAsync");
}
inline cudaError_t emu_free(void* p, const char* call) {
  ::wb::emu::refuse_in_capture(call, "a captured step may not free device memory (cudaFree synchronises the device)");
  ::wb::emu::device_free(p);
  return cudaError_t(::wb::emu::sticky_error());
}
inline cudaError_t cudaFree(void* p) { return emu_free(p, "cudaFree"); }
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return emu_free(p, "cudaFreeAsync"); }

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
inline cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  return cudaError_t(
      ::wb::emu::device_memcpy(dst, src, bytes, ::wb::emu::CopyKind(int(kind)), "cudaMemcpy", /*synchronous=*/true));
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t = nullptr) {
  return cudaError_t(
      ::wb::emu::device_memcpy(dst, src, bytes, ::wb::emu::CopyKind(int(kind)), "cudaMemcpyAsync", false));
}
inline cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t = nullptr) {
  return cudaError_t(::wb::emu::device_memset(p, value, bytes));
}
inline cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaError_t(::wb::emu::sticky_error());
}

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};

inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (const int sticky = ::wb::emu::sticky_error()) return cudaError_t(sticky);
  if (device != 0) return cudaErrorInvalidValue;
  const ::wb::emu::Target& t = ::wb::emu::target();
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = t.max_threads_per_block;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = int(t.static_shared_per_block);
      break;
    case cudaDevAttrWarpSize:
      *value = 32;
      break;
    case cudaDevAttrMultiProcessorCount:
      *value = t.multiprocessors;
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *value = t.major;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = t.minor;
      break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      *value = int(t.shared_per_multiprocessor);
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = int(t.max_shared_per_block_optin);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

template <class... Params>
inline cudaError_t cudaFuncSetAttribute(void (*kernel)(Params...), cudaFuncAttribute attr, int value) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaErrorInvalidValue;
  return cudaError_t(::wb::emu::set_max_dynamic_shared(reinterpret_cast<const void*>(kernel), value));
}

template <class... Params>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, void (*kernel)(Params...), int block_size,
                                                                 std::size_t dynamic_shared) {
  return cudaError_t(::wb::emu::occupancy(blocks, reinterpret_cast<const void*>(kernel), block_size, dynamic_shared));
}

}  // namespace emu_build
}  // namespace wb
