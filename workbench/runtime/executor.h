#pragma once
// Where variants run: host memory and the calling thread (cpu), or a CUDA device and
// a stream (cuda). The harness allocates, copies, poisons and times through this
// interface and never touches the CUDA runtime itself.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contract/exec_context.h"
#include "contract/types.h"
#include "workbench/runtime/ceilings.h"
#include "workbench/runtime/counters.h"

namespace wb {

struct Variant;

// (cpu) What the CPU and the libraries of the CPU rungs can do here, as wb uses them
// (base/cpu_isa.h, device/cpu/onednn.h): `wb device` prints it, reports carry it.
struct CpuCapabilities {
  std::string features;        // the extensions wb uses: "AVX2, FMA, AVX-512 F/BW/CD/DQ/VL, ..."
  std::string detected;        // the CPU's own (differs from features only under a cap)
  std::string detected_level;  // the CPU's own level: "avx512bf16"
  std::string cap;             // WB_CPU_ISA's level, "" when not capped
  std::string onednn;          // "oneDNN 2.6.3, kernels for avx2 (capped by ...); bf16 matmul: none"
  bool onednn_bf16_matmul = false;
  std::string openblas_core;  // the kernels OpenBLAS picked for this CPU: "Haswell", "SkylakeX"
};

struct DeviceInfo {
  Backend backend = Backend::cpu;
  std::string name;         // "NVIDIA H100 80GB HBM3", or the CPU model
  std::string slug;         // "nvidia-h100-80gb-hbm3": results/<slug>/
  int multiprocessors = 0;  // SMs, or logical CPU cores
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;            // L2 (cuda), last-level cache (cpu)
  std::string compute_capability;  // "9.0" (cuda)
  int clock_khz = 0;               // SM clock (cuda)
  int memory_clock_khz = 0;        // (cuda)
  int memory_bus_bits = 0;         // (cuda)
  std::string driver_version;      // (cuda) "13.0"
  std::string runtime_version;     // (cuda) "13.0"
  std::string emulation_flavour;   // (emu) "plain", "address" (ASan) or "thread" (TSan)
  // What code runs on: the CPU's instruction set ("x86_64", "aarch64"), or the GPU's
  // ("sm_90"; emu: the emulated one). Where no best.json section matches the device
  // exactly, the trainer takes one of the same architecture.
  std::string architecture;
  // (cpu, x86-64) The instruction-set level that selects rungs, capped by WB_CPU_ISA:
  // "sse2", "avx2", "avx512", "avx512bf16", "amx" (base/cpu_isa.h). The slug ends with
  // it, so that choices made on one level are not taken for another's.
  std::string isa;
  std::optional<CpuCapabilities> cpu;  // (cpu) in reports: host_cpu_capabilities(), context.h
};

// Why variant v cannot run on this device at all (the emulator cannot run what needs
// cuDNN, cuBLASLt or tensor cores; a GPU below the variant's compute capability), or
// nullopt. Shapes and launch parameters are the variant's own skip_reason.
std::optional<std::string> cannot_run_on(const Variant& v, const DeviceInfo& d);

// "9.0" -> 90; 0 when not a compute capability.
int compute_capability_number(const std::string& cc);

std::string slugify(const std::string& name);

// A captured step (Executor::begin_capture .. end_capture): the device operations issued
// between the two, with every argument and pointer baked in, to be replayed as one
// (Executor::replay) on the executor that captured it. Owned by the caller; opaque
// (each backend keeps its own: a cudaGraphExec_t, the emulator's recording).
class CapturedGraph {
 public:
  virtual ~CapturedGraph() = default;
  virtual Backend backend() const = 0;
  // How many operations it holds (kernel launches, memsets, copies, library calls);
  // 0 where the backend does not say (cuda).
  virtual std::size_t size() const = 0;
};

// A pool of timing points on an executor's stream (Executor::make_markers), made before
// the work it times so that the work allocates nothing: record(i) puts marker i in the
// stream's order, where it is reached when everything issued before it is done, and
// seconds_between(i, j) is the time from marker i to marker j once both are reached. On
// cuda a marker is a CUDA event, and seconds_between waits for j (read them after the
// synchronisation that ends the timed work, so that the wait costs nothing); on cpu and
// emu a call returns when its work is done, and a marker is the steady clock when it is
// recorded. Inside a CUDA-graph capture record and seconds_between are refused, like the
// other calls a captured step may not make: a replayed graph would record no time the
// host can read. Owned by the caller; it must not outlive the executor.
class Markers {
 public:
  explicit Markers(std::size_t n) : recorded_(n, false) {}
  virtual ~Markers() = default;
  Markers(const Markers&) = delete;
  Markers& operator=(const Markers&) = delete;
  std::size_t size() const { return recorded_.size(); }
  // Records marker i (again, if it was: a pool is reused step after step);
  // std::logic_error when i >= size().
  virtual void record(std::size_t i) = 0;
  // Seconds from marker i to marker j (negative when j was recorded first);
  // std::logic_error when either is out of range or was never recorded.
  virtual double seconds_between(std::size_t i, std::size_t j) = 0;

 protected:
  // The checks of the two calls, which are a bug of the caller when they fail.
  void check_index(std::size_t i, const char* call) const;
  void check_recorded(std::size_t i, std::size_t j) const;
  std::vector<bool> recorded_;
};

// The markers of a backend whose calls return when their work is done (cpu, emu): the
// steady clock at record().
class SteadyClockMarkers : public Markers {
 public:
  explicit SteadyClockMarkers(std::size_t n) : Markers(n), at_(n) {}
  void record(std::size_t i) override;
  double seconds_between(std::size_t i, std::size_t j) override;

 private:
  std::vector<std::chrono::steady_clock::time_point> at_;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual Backend backend() const = 0;
  virtual const DeviceInfo& device() const = 0;
  virtual ExecContext* context() = 0;

  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* p) noexcept = 0;
  virtual void to_device(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void to_host(void* dst, const void* src, std::size_t bytes) = 0;
  // Every byte 0xFF: NaN as float, -1 as int. Unwritten outputs then fail validation.
  virtual void poison(void* dst, std::size_t bytes) = 0;
  // Every byte 0 (asynchronous on cuda, like a launch).
  virtual void zero(void* dst, std::size_t bytes) = 0;
  // Waits for every launch; throws BackendError on an asynchronous error.
  virtual void synchronize() = 0;
  // Evicts the device's L2 cache between timed launches (a no-op on the host).
  virtual void flush_cache() {}
  // Bytes one flush_cache() writes (0: it does nothing).
  virtual std::size_t flush_bytes() const { return 0; }
  // Seconds one launch takes: CUDA events around it on the stream, a steady clock on
  // the host.
  virtual double time_launch(const std::function<void()>& launch) = 0;
  // A pool of n timing points on this executor's stream (Markers above); on cuda it
  // creates n CUDA events, so make it before the work it times, not inside it.
  virtual std::unique_ptr<Markers> make_markers(std::size_t n) { return std::make_unique<SteadyClockMarkers>(n); }
  // Measures the device's copy bandwidth and matrix throughput (seconds of work).
  virtual Ceilings measure_ceilings() = 0;
  // The matrix ceiling of one numeric class, and fp32's where the class has none here
  // (Ceilings::absent says why): what the trainer's MFU needs. The host measures no
  // memory stream and nothing of another class for it (an fp32 run never touches
  // oneDNN's bf16 matmul); elsewhere it is every ceiling.
  virtual Ceilings measure_matmul_ceiling(NumericClass c) {
    (void)c;
    return measure_ceilings();
  }
  // Whether launches here can be timed (emu: never).
  virtual bool timed() const { return true; }
  // Before a run of a configuration: index 0 and 1 are its first two validated runs
  // (the second compared with the first bit for bit), 2 + i its i-th unvalidated
  // launch, kLastRun the validated run after those. The emulator runs each in another
  // schedule (emu_executor.cpp), so that order-dependent results differ.
  static constexpr int kLastRun = -1;
  virtual void begin_run(int index, uint64_t seed) {
    (void)index;
    (void)seed;
  }
  // emu (the plain build): count what the warps of each configuration's first validated
  // run ask of memory (workbench/runtime/counters.h), every block of each launch or, with
  // sample_blocks > 0, that many; with only_sampled the other blocks do not even run
  // (wb predict's counting-only runs, whose outputs are not read). Elsewhere, or in a
  // sanitized build, UsageError says why not.
  virtual void set_counting(bool on, uint64_t sample_blocks, bool only_sampled = false);
  // The counters of the launches since the last call, their sites named for the variant
  // whose source is `variant_source`; nullopt when not counting.
  virtual std::optional<Counters> take_counters(const std::string& variant_source) {
    (void)variant_source;
    return std::nullopt;
  }
  // What the launches from now on belong to ("matmul_forward_bf16 cuda/6 tile=128,..."),
  // for the messages of the device's checks (the emulator's faults name it); "" after.
  virtual void working_on(const std::string& what) { (void)what; }
  // What the device's checks noted since the last call, without failing anything (the
  // emulator's synccheck notes); and forgets them.
  virtual std::vector<std::string> take_notes() { return {}; }
  // emu: a __syncthreads reached while threads of the block have exited is a synccheck
  // fault instead of a note. Other backends have no such check: UsageError.
  virtual void set_strict_sync(bool strict);
  // Whether the device is lost, and to what: after a sticky fault (an illegal address,
  // a trap, a failed launch) a CUDA context answers every later call with the same
  // error until the process ends, and the emulator behaves alike. Then this returns the
  // fault ("cudaErrorIllegalAddress: ..."), and keeps returning it; nullopt while the
  // device works, also after a refused launch configuration, which is not sticky. The
  // host never gets lost.
  virtual std::optional<std::string> lost() { return std::nullopt; }

  // CUDA-graph capture, for a step run once and then replayed (trainer --cuda-graph).
  // Between begin_capture() and end_capture() the launches, memsets, device-to-device
  // copies and cuBLAS calls issued on this executor's stream by the calling thread are
  // recorded, not run, with their arguments by value; replay() runs them again, in order,
  // with the pointers of the capture. What a captured step may not do throws, naming the
  // call and working_on()'s text, and ends the capture (nothing recorded is kept; the
  // executor stays usable and may capture again): allocate, release, synchronize,
  // to_host, to_device (pageable host memory is read at replay, not at capture), and in
  // a variant cudaMalloc(Async), cudaFree(Async), cudaDeviceSynchronize,
  // cudaStreamSynchronize, cudaEventSynchronize and every cudaMemcpy but an asynchronous
  // device-to-device one. emu: emu::CaptureError (emu/emu.h); cuda: UsageError.
  // Why this backend cannot capture (cpu: it runs on the calling thread, there is no
  // stream to capture), or nullopt where it can (cuda, emu).
  virtual std::optional<std::string> capture_unsupported() const {
    return "CUDA-graph capture is not supported on the " + std::string(to_string(backend())) + " backend";
  }
  // Starts capturing; UsageError where capture_unsupported(), or when already capturing.
  virtual void begin_capture();
  // Ends the capture and returns what it recorded; UsageError when not capturing (the
  // message says what abandoned an abandoned capture).
  virtual std::unique_ptr<CapturedGraph> end_capture();
  // Runs a graph this backend captured on the stream, asynchronously like a launch
  // (synchronize() waits for it); UsageError inside a capture or for another backend's
  // graph, BackendError when an operation of it fails.
  virtual void replay(const CapturedGraph& graph);
  virtual bool capturing() const { return false; }
};

// Throws DeviceUnavailable (with the runtime's own words) when the backend cannot run.
// emu is available in every build.
std::unique_ptr<Executor> make_executor(Backend b);

// nullopt when a CUDA device is usable; otherwise why not.
std::optional<std::string> cuda_unavailable_reason();

// cuda when a CUDA device is usable, else cpu.
Backend default_backend();

// This machine's physical memory (MemTotal), 0 when unknown.
int64_t host_memory_bytes();

}  // namespace wb
