#pragma once
// The host side every CUDA variant needs: one error-check idiom that names the call,
// file and line (WB_CHECK, for CUDA runtime calls here and for cuBLAS and cuDNN
// status codes in libraries.h; WB_LAUNCH in dialect.cuh checks every launch with it),
// and the stream a launch runs on.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "base/errors.h"
#include "contract/variant.h"

namespace wb::cuda {

[[noreturn]] void throw_error(const char* library, int code, const char* name, const char* message, const char* call,
                              const char* file, int line);

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    throw_error("CUDA", static_cast<int>(status), cudaGetErrorName(status), cudaGetErrorString(status), call, file,
                line);
}

inline cudaStream_t stream(const Launch& launch) {
  return launch.ctx ? static_cast<cudaStream_t>(launch.ctx->stream) : nullptr;
}

// Whether a pointer allows 128-bit (float4) accesses.
inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// The check every variant with 128-bit loads or stores makes before its launch: a
// pointer off a 16-byte boundary (a null optional tensor passes) means the variant
// cannot run these tensors, which is a skip with the reason (Unsupported), never a
// misaligned-address fault. `what` names the variant and the tensors checked.
inline void require_aligned16(const char* what, std::initializer_list<const void*> pointers) {
  for (const void* p : pointers)
    if (!aligned16(p))
      throw Unsupported(std::string(what) + ": needs 16-byte aligned tensors for its 128-bit accesses");
}

// Blocks needed to cover n items with block_size threads (or items) each.
inline unsigned grid_for(int64_t n, int64_t per_block) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

}  // namespace wb::cuda

#define WB_CHECK(call) ::wb::cuda::check((call), #call, __FILE__, __LINE__)
