#pragma once
// One source, two compilers. Every CUDA variant is compiled by nvcc for the GPU and by
// the host compiler for the emulator (WB_EMU: emu/dialect.h). The three things the two
// cannot spell alike go through these macros:
//
//   WB_LAUNCH(kernel, grid, block, dynamic_shared_bytes, stream, args...);
//       kernel<<<grid, block, dynamic_shared_bytes, stream>>>(args...) on the GPU, a
//       checked emulated launch otherwise; then the launch's error is checked
//       (WB_CHECK idiom: the call, file and line in the message).
//   WB_SHARED(float, tile, [32][33]);             __shared__ float tile[32][33];
//   WB_SHARED_ALIGNED(16, float, sa, [8][132]);   __shared__ __align__(16) float sa[8][132];
//   WB_DYNAMIC_SHARED(float4, smem);              extern __shared__ float4 smem[];
//
// And a variant that needs what the emulator lacks (cuDNN, cuBLASLt, tensor cores)
// compiles its launcher for the GPU only and says why in Variant::not_emulated:
//   Variant v = Variant::of<MatmulForwardArgs>(WB_DEVICE_ONLY(launch));
// is Variant::of(&launch) under nvcc; under the emulator there is no launcher, and the
// registry's stub stands in (never called: the variant is refused before it runs).
//
// Under the emulator every block gets its own copy of each shared array, filled with
// 0xFF and guarded by canaries, and dynamic shared memory is exactly the launch's bytes.
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "device/cuda/runtime.h"

#if WB_EMU

#include "emu/dialect.h"  // the macros and the emulated launch

#else  // nvcc

#define WB_DEVICE_ONLY(launcher) &launcher
#define WB_LAUNCH(...) ::wb::cuda::launch(#__VA_ARGS__, __FILE__, __LINE__, __VA_ARGS__)
#define WB_SHARED(type, name, dims) __shared__ type name dims
#define WB_SHARED_ALIGNED(align, type, name, dims) __shared__ __align__(align) type name dims
#define WB_DYNAMIC_SHARED(type, name) extern __shared__ type name[]

namespace wb::cuda {

template <class... Params, class... Args>
void launch(const char* text, const char* file, int line, void (*kernel)(Params...), dim3 grid, dim3 block,
            std::size_t dynamic_shared, cudaStream_t stream, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "a kernel launch passes one argument per parameter");
  kernel<<<grid, block, dynamic_shared, stream>>>(std::forward<Args>(args)...);
  check(cudaGetLastError(), text, file, line);
}

}  // namespace wb::cuda

#endif
