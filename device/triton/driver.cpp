// The CUDA driver functions the Triton launchers call (tools/triton/aot.py writes them
// against the driver API), defined here as forwarders to the driver the CUDA runtime
// loads. wb links the runtime, never libcuda.so itself: a binary that named libcuda
// would not start on a machine without NVIDIA's driver, where wb's CPU and emu
// backends must run. cudaGetDriverEntryPointByVersion asks the runtime for the
// driver's own function, once per function; without a driver that fails, and the
// forwarder answers CUDA_ERROR_NO_DEVICE (no launcher is reached there anyway: the cuda
// backend refuses to start first).
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace {

// The driver's function `name` at the API version these signatures have (12.0).
template <class Fn>
Fn driver(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(fn);
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  static const auto fn = driver<CUresult(CUDAAPI*)(CUmodule*, const void*)>("cuModuleLoadData");
  return fn ? fn(module, image) : CUDA_ERROR_NO_DEVICE;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  static const auto fn = driver<CUresult(CUDAAPI*)(CUmodule)>("cuModuleUnload");
  return fn ? fn(module) : CUDA_ERROR_NO_DEVICE;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  static const auto fn = driver<CUresult(CUDAAPI*)(CUfunction*, CUmodule, const char*)>("cuModuleGetFunction");
  return fn ? fn(function, module, name) : CUDA_ERROR_NO_DEVICE;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  static const auto fn = driver<CUresult(CUDAAPI*)(CUfunction, CUfunction_attribute, int)>("cuFuncSetAttribute");
  return fn ? fn(function, attribute, value) : CUDA_ERROR_NO_DEVICE;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared, CUstream stream, void** params, void** extra) {
  static const auto fn =
      driver<CUresult(CUDAAPI*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**)>("cuLaunchKernel");
  return fn ? fn(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra) : CUDA_ERROR_NO_DEVICE;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** text) {
  static const auto fn = driver<CUresult(CUDAAPI*)(CUresult, const char**)>("cuGetErrorName");
  if (!fn) *text = nullptr;
  return fn ? fn(error, text) : CUDA_ERROR_NO_DEVICE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** text) {
  static const auto fn = driver<CUresult(CUDAAPI*)(CUresult, const char**)>("cuGetErrorString");
  if (!fn) *text = nullptr;
  return fn ? fn(error, text) : CUDA_ERROR_NO_DEVICE;
}

}  // extern "C"
