// The emu backend: the CUDA variants compiled for the SIMT emulator (emu/),
// device memory as checked host allocations, launches run at once on this machine's
// cores. Never timed: emulation proves logic, not speed.
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>

#include "base/errors.h"
#include "emu/emu.h"
#include "workbench/runtime/executor.h"

namespace wb {
namespace {

// The emulator's recording of a captured step (emu::Graph).
struct EmuGraph final : CapturedGraph {
  explicit EmuGraph(emu::Graph g) : graph(std::move(g)) {}
  Backend backend() const override { return Backend::emu; }
  std::size_t size() const override { return graph.size(); }
  emu::Graph graph;
};

// The emulator runs a launch before it returns, so its markers are the steady clock's;
// what it adds is the capture's refusal, as for the executor's other calls.
class EmuMarkers final : public SteadyClockMarkers {
 public:
  using SteadyClockMarkers::SteadyClockMarkers;
  void record(std::size_t i) override {
    emu::refuse_in_capture("Markers::record",
                           "a captured step may not record a timing marker (a replayed graph has no op calls to "
                           "time; time a step launched op by op)");
    SteadyClockMarkers::record(i);
  }
  double seconds_between(std::size_t i, std::size_t j) override {
    emu::refuse_in_capture("Markers::seconds_between",
                           "a captured step may not synchronise (reading a marker waits for it)");
    return SteadyClockMarkers::seconds_between(i, j);
  }
};

class EmuExecutor final : public Executor {
 public:
  EmuExecutor() {
    const emu::Target& t = emu::target();
    info_.backend = Backend::emu;
    info_.name = "emulated " + t.name + (std::string(emu::flavour()) == "plain" ? "" : std::string(" (") + emu::flavour() + " sanitizer)");
    info_.slug = "emu";
    info_.multiprocessors = t.multiprocessors;
    info_.compute_capability = std::to_string(t.major) + "." + std::to_string(t.minor);
    info_.emulation_flavour = emu::flavour();
    info_.architecture = "sm_" + std::to_string(t.major) + std::to_string(t.minor);
    emu::reset();
  }

  Backend backend() const override { return Backend::emu; }
  const DeviceInfo& device() const override { return info_; }
  ExecContext* context() override { return &ctx_; }

  ~EmuExecutor() override {
    if (emu::capturing()) emu::abandon_capture("the executor's destructor", "the executor ended while capturing");
  }

  // In a capture (begin_capture), the calls a captured step may not make throw
  // emu::CaptureError (emu/emu.h), and poison and zero are recorded memsets.
  void* allocate(std::size_t bytes) override {
    emu::refuse_in_capture("Executor::allocate", "a captured step may not allocate (allocate before the capture)");
    return emu::device_malloc(bytes);
  }
  void release(void* p) noexcept override {
    emu::abandon_capture("Executor::release", "a captured step may not free device memory");
    emu::device_free(p);
  }
  void to_device(void* dst, const void* src, std::size_t bytes) override {
    emu::refuse_in_capture("Executor::to_device",
                           "a host-to-device copy from pageable host memory: a graph's memcpy node reads the host buffer "
                           "when the graph is replayed, not when it was captured (upload before the capture)");
    check();
    std::memcpy(dst, src, bytes);
  }
  void to_host(void* dst, const void* src, std::size_t bytes) override {
    emu::refuse_in_capture("Executor::to_host",
                           "a captured step may not copy to the host (read results after replay and synchronize)");
    check();
    std::memcpy(dst, src, bytes);
  }
  void poison(void* dst, std::size_t bytes) override {
    if (emu::capturing()) return memset_in_capture(dst, 0xFF, bytes);
    std::memset(dst, 0xFF, bytes);
  }
  void zero(void* dst, std::size_t bytes) override {
    if (emu::capturing()) return memset_in_capture(dst, 0, bytes);
    check();
    std::memset(dst, 0, bytes);
  }
  void synchronize() override {
    emu::refuse_in_capture("Executor::synchronize", "a captured step may not synchronise (it runs as one graph)");
    check();
  }

  std::optional<std::string> capture_unsupported() const override { return std::nullopt; }
  void begin_capture() override {
    if (emu::capturing()) throw UsageError("begin_capture: the executor is already capturing (captures do not nest)");
    check();
    emu::begin_capture();
  }
  std::unique_ptr<CapturedGraph> end_capture() override {
    try {
      return std::make_unique<EmuGraph>(emu::end_capture());
    } catch (const emu::CaptureError& e) {
      throw UsageError(e.what());
    }
  }
  void replay(const CapturedGraph& graph) override {
    const auto* g = dynamic_cast<const EmuGraph*>(&graph);
    if (!g)
      throw UsageError("replay: a graph captured on the " + std::string(to_string(graph.backend())) +
                       " backend cannot run on the emu backend");
    if (emu::capturing()) throw UsageError("replay inside a CUDA-graph capture: a graph is replayed outside one");
    check();
    if (const int code = g->graph.replay()) {
      check();  // a fault: sticky, as after a direct launch
      throw BackendError(std::string("replay of a captured graph: ") + emu::error_name(code) + ": " +
                         emu::error_string(code));
    }
  }
  bool capturing() const override { return emu::capturing(); }
  std::unique_ptr<Markers> make_markers(std::size_t n) override { return std::make_unique<EmuMarkers>(n); }
  double time_launch(const std::function<void()>&) override {
    throw UsageError("the emu backend is never timed: emulation proves logic, not speed");
  }
  Ceilings measure_ceilings() override {
    Ceilings c;
    c.method = "not measured: the emu backend is never timed";
    return c;
  }
  bool timed() const override { return false; }
  // The runs of a configuration (Executor::begin_run): the first in forward thread
  // order, blocks in parallel; the second, compared with it bit for bit, is the
  // interleaving pass (threads in a shuffled order, switching at global and shared
  // memory accesses: at every one in launches of up to 256 threads, at one in 16 in
  // larger ones); the unvalidated launches of wb check run the blocks of a kernel that
  // polls one at a time, block 0 first, so that a block waiting for another one faults;
  // the last validated run lets warps drift apart (each warp alone from one barrier to
  // the next), so that a warp that overwrites what another has yet to read before the
  // barrier between them (a cp.async refill issued too early) spoils the result, and
  // starts each grid's blocks in an order drawn from the seed, reversed or shuffled with
  // block 0 last, so that a kernel that assumes block 0 runs first (it initialises what
  // the others then add to) spoils it too; on a GPU any block may start first.
  void begin_run(int index, uint64_t seed) override {
    emu::Schedule s;
    s.seed = seed * 2654435761u + uint64_t(index);
    s.shuffled = index != 0;
    if (index == 1) {
      s.interleave = true;
      s.period = 16;
    }
    if (index >= 2) s.blocks = emu::Schedule::Blocks::serial_if_polling;
    s.warps_alone = index == kLastRun;
    if (index == kLastRun) s.blocks = emu::Schedule::Blocks::shuffled;
    emu::set_schedule(s);
    // Counting keeps a block's lanes in step (every access yields): a schedule of its
    // own, so the first run, whose thread order is fixed, is the counted one.
    emu::set_counting(counting_ && index == 0, sample_blocks_, only_sampled_);
  }
  void set_counting(bool on, uint64_t sample_blocks, bool only_sampled) override {
    if (on && !emu::reports_accesses())
      throw UsageError(std::string("--counters: this emulator is the ") + emu::flavour() +
                       " sanitizer build, whose kernels report no plain memory accesses; counting needs the plain "
                       "build");
    counting_ = on;
    sample_blocks_ = sample_blocks;
    only_sampled_ = only_sampled;
  }
  std::optional<Counters> take_counters(const std::string& variant_source) override {
    std::vector<emu::LaunchCounters> launches = emu::take_counters();
    if (!counting_) return std::nullopt;
    return summarize_counters(launches, variant_source, sample_blocks_);
  }
  void working_on(const std::string& what) override { emu::set_work(what); }
  std::vector<std::string> take_notes() override { return emu::take_notes(); }
  void set_strict_sync(bool strict) override { emu::set_strict_sync(strict); }
  // Like a GPU, the emulated context stays faulted: the rest of the run is lost (the
  // emulator could reset, but then emu would not rehearse what a GPU does).
  std::optional<std::string> lost() override {
    if (const int code = emu::sticky_error()) return std::string(emu::error_name(code)) + ": " + emu::fault_message();
    return std::nullopt;
  }

 private:
  void memset_in_capture(void* dst, int value, std::size_t bytes) {
    if (const int code = emu::device_memset(dst, value, bytes))
      throw BackendError(std::string("a memset in a CUDA-graph capture: ") + emu::error_name(code) + ": " +
                         emu::fault_message());
  }

  // A fault makes the emulated context sticky, as on a GPU.
  void check() const {
    if (const int code = emu::sticky_error())
      throw BackendError(std::string("the emulated device faulted: ") + emu::error_name(code) + ": " +
                         emu::fault_message());
  }

  DeviceInfo info_;
  ExecContext ctx_;
  bool counting_ = false;
  uint64_t sample_blocks_ = 0;
  bool only_sampled_ = false;
};

}  // namespace

std::unique_ptr<Executor> make_emu_executor() { return std::make_unique<EmuExecutor>(); }

}  // namespace wb
