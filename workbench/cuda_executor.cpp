// The cuda backend: device memory, one stream, CUDA events for timing, an L2 flush
// between timed launches. Compiled only when CUDA is (see executor_factory.cpp).
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/cuda/libraries.h"
#include "kernels/errors.h"
#include "workbench/executor.h"

namespace wb {
namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  WB_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

class CudaExecutor final : public Executor {
 public:
  CudaExecutor() {
    int device = 0;
    WB_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    WB_CHECK(cudaGetDeviceProperties(&prop, device));
    info_.backend = Backend::cuda;
    info_.name = prop.name;
    info_.slug = slugify(info_.name);
    info_.multiprocessors = prop.multiProcessorCount;
    info_.memory_bytes = int64_t(prop.totalGlobalMem);
    info_.l2_bytes = prop.l2CacheSize;
    info_.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    info_.clock_khz = attribute(cudaDevAttrClockRate, device);
    info_.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device);
    info_.memory_bus_bits = prop.memoryBusWidth;
    int driver = 0, runtime = 0;
    WB_CHECK(cudaDriverGetVersion(&driver));
    WB_CHECK(cudaRuntimeGetVersion(&runtime));
    info_.driver_version = version_text(driver);
    info_.runtime_version = version_text(runtime);

    WB_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    WB_CHECK(cudaEventCreate(&start_));
    WB_CHECK(cudaEventCreate(&stop_));
    libraries_ = std::make_unique<CudaLibraries>(stream_);
    ctx_.stream = stream_;
    ctx_.libraries = libraries_.get();
    // Twice the L2, so that a memset through it leaves nothing of the last launch.
    flush_bytes_ = std::max<std::size_t>(2 * std::size_t(info_.l2_bytes), 8u << 20);
    WB_CHECK(cudaMalloc(&flush_, flush_bytes_));
  }

  ~CudaExecutor() override {
    libraries_.reset();
    cudaFree(flush_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  Backend backend() const override { return Backend::cuda; }
  const DeviceInfo& device() const override { return info_; }
  ExecContext* context() override { return &ctx_; }

  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    WB_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  void release(void* p) noexcept override { cudaFree(p); }
  void to_device(void* dst, const void* src, std::size_t bytes) override {
    WB_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    WB_CHECK(cudaStreamSynchronize(stream_));
  }
  void to_host(void* dst, const void* src, std::size_t bytes) override {
    WB_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    WB_CHECK(cudaStreamSynchronize(stream_));
  }
  void poison(void* dst, std::size_t bytes) override { WB_CHECK(cudaMemsetAsync(dst, 0xFF, bytes, stream_)); }
  void synchronize() override {
    WB_CHECK(cudaStreamSynchronize(stream_));
    WB_CHECK(cudaGetLastError());
  }
  void flush_cache() override { WB_CHECK(cudaMemsetAsync(flush_, 0, flush_bytes_, stream_)); }
  double time_launch(const std::function<void()>& launch) override {
    WB_CHECK(cudaEventRecord(start_, stream_));
    launch();
    WB_CHECK(cudaEventRecord(stop_, stream_));
    WB_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    WB_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return double(ms) * 1e-3;
  }

 private:
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::unique_ptr<CudaLibraries> libraries_;
  ExecContext ctx_;
  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
};

}  // namespace

std::optional<std::string> cuda_probe() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
  if (count == 0) return std::string("the CUDA runtime reports no device");
  return std::nullopt;
}

std::unique_ptr<Executor> make_cuda_executor() { return std::make_unique<CudaExecutor>(); }

}  // namespace wb
