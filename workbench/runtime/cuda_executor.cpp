// The cuda backend: device memory, one stream, CUDA events for timing, an L2 flush
// between timed launches. Compiled only when CUDA is (see executor_factory.cpp).
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "device/cuda/libraries.h"
#include "workbench/runtime/executor.h"

namespace wb {
namespace {

// The errors after which a CUDA context is unusable until the process ends: every
// later call returns them again. (A refused launch -- cudaErrorInvalidConfiguration,
// cudaErrorLaunchOutOfResources -- is not among them: the next launch can succeed.)
bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  WB_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

// A captured step: the graph cudaStreamEndCapture gave and its instantiation.
struct CudaGraph final : CapturedGraph {
  explicit CudaGraph(cudaGraph_t g) : graph(g) {}
  ~CudaGraph() override {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  Backend backend() const override { return Backend::cuda; }
  std::size_t size() const override {
    std::size_t nodes = 0;
    return cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess ? nodes : 0;
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

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
    info_.architecture = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
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
    if (capturing_) abandon("the executor's destructor", "the executor ended while capturing");
    libraries_.reset();
    cudaFree(flush_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  Backend backend() const override { return Backend::cuda; }
  const DeviceInfo& device() const override { return info_; }
  ExecContext* context() override { return &ctx_; }

  // Inside a capture (begin_capture) the calls a captured step may not make throw
  // UsageError before CUDA sees them (CUDA would invalidate the capture and say less);
  // poison and zero are memsets on the stream, which the capture records.
  void* allocate(std::size_t bytes) override {
    refuse_in_capture("Executor::allocate", "a captured step may not allocate (allocate before the capture)");
    void* p = nullptr;
    WB_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  void release(void* p) noexcept override {
    if (capturing_) abandon("Executor::release", "a captured step may not free device memory");
    cudaFree(p);
  }
  void to_device(void* dst, const void* src, std::size_t bytes) override {
    refuse_in_capture("Executor::to_device",
                      "a host-to-device copy from pageable host memory: a graph's memcpy node reads the host buffer "
                      "when the graph is replayed, not when it was captured (upload before the capture)");
    WB_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    WB_CHECK(cudaStreamSynchronize(stream_));
  }
  void to_host(void* dst, const void* src, std::size_t bytes) override {
    refuse_in_capture("Executor::to_host",
                      "a captured step may not copy to the host (read results after replay and synchronize)");
    WB_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    WB_CHECK(cudaStreamSynchronize(stream_));
  }
  void poison(void* dst, std::size_t bytes) override { WB_CHECK(cudaMemsetAsync(dst, 0xFF, bytes, stream_)); }
  void zero(void* dst, std::size_t bytes) override { WB_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_)); }
  void synchronize() override {
    refuse_in_capture("Executor::synchronize", "a captured step may not synchronise (it runs as one graph)");
    WB_CHECK(cudaStreamSynchronize(stream_));
    WB_CHECK(cudaGetLastError());
  }
  void working_on(const std::string& what) override { work_ = what; }

  // Capture on the executor's stream in cudaStreamCaptureModeThreadLocal: the unsafe
  // calls (cudaMalloc, a synchronisation, a legacy-stream copy) of this thread fail the
  // capture; other threads are free to make theirs.
  //
  // The libraries in a capture: their handles exist before it (cublasCreate and
  // cudnnCreate allocate), and cuBLAS has a fixed workspace (CudaLibraries::cublas(),
  // device/cuda/libraries.h), so that it never allocates while captured. What the
  // variants build on first use -- cuBLASLt heuristics, cuDNN graphs and plans -- is
  // built by a step launched before the capture: the trainer captures its second step.
  std::optional<std::string> capture_unsupported() const override { return std::nullopt; }
  void begin_capture() override {
    if (capturing_) throw UsageError("begin_capture: the executor is already capturing (captures do not nest)");
    libraries_->cublas();  // created outside the capture
    libraries_->cublaslt();
#if WB_HAVE_CUDNN
    libraries_->cudnn();
#endif
    WB_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    capturing_ = true;
    abandoned_.reset();
  }
  std::unique_ptr<CapturedGraph> end_capture() override {
    if (!capturing_)
      throw UsageError(abandoned_ ? "end_capture: the capture was abandoned: " + *abandoned_
                                  : std::string("end_capture without begin_capture: the executor is not capturing"));
    capturing_ = false;
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    auto captured = std::make_unique<CudaGraph>(graph);  // owns the graph whatever happens next
    WB_CHECK(ended);
    WB_CHECK(cudaGraphInstantiate(&captured->exec, captured->graph, 0));
    return captured;
  }
  void replay(const CapturedGraph& graph) override {
    const auto* g = dynamic_cast<const CudaGraph*>(&graph);
    if (!g)
      throw UsageError("replay: a graph captured on the " + std::string(to_string(graph.backend())) +
                       " backend cannot run on the cuda backend");
    if (capturing_) throw UsageError("replay inside a CUDA-graph capture: a graph is replayed outside one");
    WB_CHECK(cudaGraphLaunch(g->exec, stream_));
  }
  bool capturing() const override { return capturing_; }

  std::optional<std::string> lost() override {
    if (capturing_) return lost_;  // a synchronisation would invalidate the capture
    if (!lost_) {
      // The stream's synchronisation returns a sticky error of any earlier launch; the
      // peek returns one that a failed call left without touching the stream.
      cudaError_t e = cudaStreamSynchronize(stream_);
      if (!is_sticky(e)) e = cudaPeekAtLastError();
      if (is_sticky(e)) lost_ = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    }
    return lost_;
  }
  std::unique_ptr<Markers> make_markers(std::size_t n) override { return std::make_unique<EventMarkers>(*this, n); }
  void flush_cache() override { WB_CHECK(cudaMemsetAsync(flush_, 0, flush_bytes_, stream_)); }
  std::size_t flush_bytes() const override { return flush_bytes_; }
  double time_launch(const std::function<void()>& launch) override {
    refuse_in_capture("Executor::time_launch", "a captured step may not synchronise (timing waits for an event)");
    WB_CHECK(cudaEventRecord(start_, stream_));
    launch();
    WB_CHECK(cudaEventRecord(stop_, stream_));
    WB_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    WB_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return double(ms) * 1e-3;
  }

  Ceilings measure_ceilings() override {
    Ceilings c;
    // Copy: a device-to-device copy of up to 1 GiB (an eighth of the memory at most),
    // bytes read plus written, the best of ten after a warm-up.
    const std::size_t bytes = std::min<std::size_t>(std::size_t(1) << 30, std::size_t(info_.memory_bytes) / 8);
    void* src = allocate(bytes);
    void* dst = allocate(bytes);
    auto copy = [&] { WB_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_)); };
    c.copy_gbps = 2.0 * double(bytes) / best_of(copy, 10) * 1e-9;
    release(src);
    release(dst);

    // Matrix: square GEMMs at n = 8192 (smaller when memory is short) on random data.
    int n = 8192;
    while (n > 1024 && std::size_t(n) * n * 4 * 3 > std::size_t(info_.memory_bytes) / 4) n /= 2;
    const std::size_t count = std::size_t(n) * n;
    std::vector<float> host(count);
    uint32_t state = 12345;
    for (auto& x : host) {
      state = state * 1664525u + 1013904223u;
      x = float(state >> 8) / float(1 << 24) - 0.5f;
    }
    std::vector<__nv_bfloat16> host_bf16(count);
    for (std::size_t i = 0; i < count; ++i) host_bf16[i] = __float2bfloat16(host[i]);
    float* a = static_cast<float*>(allocate(count * 4));
    float* b = static_cast<float*>(allocate(count * 4));
    float* out = static_cast<float*>(allocate(count * 4));
    void* a16 = allocate(count * 2);
    void* b16 = allocate(count * 2);
    to_device(a, host.data(), count * 4);
    to_device(b, host.data(), count * 4);
    to_device(a16, host_bf16.data(), count * 2);
    to_device(b16, host_bf16.data(), count * 2);
    cublasHandle_t h = libraries_->cublas();
    const float one = 1.0f, zero = 0.0f;
    auto gemm = [&](const void* x, const void* y, cudaDataType in, cublasComputeType_t compute) {
      return [=, &one, &zero] {
        WB_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, x, in, n, y, in, n, &zero, out, CUDA_R_32F, n,
                              compute, CUBLAS_GEMM_DEFAULT));
      };
    };
    const double flops = 2.0 * double(n) * n * n;
    WB_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    c.fp32_tflops = flops / best_of(gemm(a, b, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC), 3) * 1e-12;
    c.tf32_tflops = flops / best_of(gemm(a, b, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32), 5) * 1e-12;
    c.bf16_tflops = flops / best_of(gemm(a16, b16, CUDA_R_16BF, CUBLAS_COMPUTE_32F), 5) * 1e-12;
    for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(out), a16, b16}) release(p);
    c.method = "copy: cudaMemcpyAsync device to device of " + std::to_string(bytes >> 20) +
               " MiB, bytes read plus written, best of 10; matrix: cublasGemmEx n=" + std::to_string(n) +
               " fp32 (32F_PEDANTIC), tf32 (32F_FAST_TF32), bf16 inputs with fp32 accumulation, best of 3-5";
    return c;
  }

 private:
  // Markers as CUDA events on the executor's stream, all created here, before the work
  // they time: a step then allocates nothing and creates nothing. Nested, for the
  // stream and the capture's refusal.
  class EventMarkers final : public Markers {
   public:
    EventMarkers(CudaExecutor& ex, std::size_t n) : Markers(n), ex_(ex) {
      events_.reserve(n);
      try {
        for (std::size_t i = 0; i < n; ++i) {
          cudaEvent_t e = nullptr;
          WB_CHECK(cudaEventCreate(&e));
          events_.push_back(e);
        }
      } catch (...) {
        destroy();
        throw;
      }
    }
    ~EventMarkers() override { destroy(); }
    void record(std::size_t i) override {
      check_index(i, "Markers::record");
      // A captured event record would become a node of the graph, timing its replays
      // where no one reads them: refused, like the captured step's other host-side calls.
      ex_.refuse_in_capture("Markers::record",
                            "a captured step may not record a timing marker (a replayed graph has no op calls to "
                            "time; time a step launched op by op)");
      WB_CHECK(cudaEventRecord(events_[i], ex_.stream_));
      recorded_[i] = true;
    }
    double seconds_between(std::size_t i, std::size_t j) override {
      check_recorded(i, j);
      ex_.refuse_in_capture("Markers::seconds_between",
                            "a captured step may not synchronise (reading a marker waits for it)");
      // Both are done once a synchronisation after them returned; otherwise this waits,
      // rather than failing with cudaErrorNotReady.
      WB_CHECK(cudaEventSynchronize(events_[i]));
      WB_CHECK(cudaEventSynchronize(events_[j]));
      float ms = 0;
      WB_CHECK(cudaEventElapsedTime(&ms, events_[i], events_[j]));
      return double(ms) * 1e-3;
    }

   private:
    void destroy() noexcept {
      for (cudaEvent_t e : events_) cudaEventDestroy(e);
      events_.clear();
    }
    CudaExecutor& ex_;
    std::vector<cudaEvent_t> events_;
  };

  // "<call> inside a CUDA-graph capture (while running <work>): <why>".
  std::string capture_message(const std::string& call, const std::string& why) const {
    return call + " inside a CUDA-graph capture (" + (work_.empty() ? std::string("no work named") : "while running " + work_) +
           "): " + why;
  }
  // Ends the capture on the stream and drops what it held; end_capture then says why.
  void abandon(const std::string& call, const std::string& why) noexcept {
    capturing_ = false;
    try {
      abandoned_ = capture_message(call, why);
    } catch (...) {
    }
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();  // an invalidated capture's error is not the next call's
  }
  // When capturing: abandons the capture and throws UsageError naming the call.
  void refuse_in_capture(const std::string& call, const std::string& why) {
    if (!capturing_) return;
    abandon(call, why);
    throw UsageError(abandoned_.value_or(call));
  }

  // The shortest of `reps` timed runs after one warm-up.
  double best_of(const std::function<void()>& f, int reps) {
    f();
    synchronize();
    double best = 1e30;
    for (int i = 0; i < reps; ++i) best = std::min(best, time_launch(f));
    return best;
  }

  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::unique_ptr<CudaLibraries> libraries_;
  ExecContext ctx_;
  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
  std::optional<std::string> lost_;  // once lost, lost for good
  std::string work_;                 // working_on, for the capture's messages
  bool capturing_ = false;
  std::optional<std::string> abandoned_;  // what abandoned the last capture
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
