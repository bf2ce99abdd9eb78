// The emu backend: the CUDA variants compiled for the SIMT emulator (emu/),
// device memory as checked host allocations, launches run at once on this machine's
// cores. Never timed: emulation proves logic, not speed.
#include <cstring>
#include <stdexcept>

#include "emu/emu.h"
#include "kernels/errors.h"
#include "workbench/runtime/executor.h"

namespace wb {
namespace {

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

  void* allocate(std::size_t bytes) override { return emu::device_malloc(bytes); }
  void release(void* p) noexcept override { emu::device_free(p); }
  void to_device(void* dst, const void* src, std::size_t bytes) override {
    check();
    std::memcpy(dst, src, bytes);
  }
  void to_host(void* dst, const void* src, std::size_t bytes) override {
    check();
    std::memcpy(dst, src, bytes);
  }
  void poison(void* dst, std::size_t bytes) override { std::memset(dst, 0xFF, bytes); }
  void zero(void* dst, std::size_t bytes) override {
    check();
    std::memset(dst, 0, bytes);
  }
  void synchronize() override { check(); }
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
  // barrier between them (a cp.async refill issued too early) spoils the result.
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
