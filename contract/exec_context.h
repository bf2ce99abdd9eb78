#pragma once
// What a variant needs from its surroundings beyond its arguments: the stream to
// launch on and the vendor-library handles bound to it. Plain pointers so that this
// header compiles without CUDA; CUDA code reaches the typed handles through
// device/cuda/libraries.h.

namespace wb {

class CudaLibraries;

struct ExecContext {
  void* stream = nullptr;              // cudaStream_t on the cuda backend, unused on cpu
  CudaLibraries* libraries = nullptr;  // cuBLAS, cuBLASLt, cuDNN handles, created on first use
};

}  // namespace wb
