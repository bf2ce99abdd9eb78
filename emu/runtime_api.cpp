// The CUDA runtime's calls as the emulator answers them (emu/emu.h; the shim maps
// cudaXxx onto these): the last and the sticky error with their names and messages,
// the schedule and the checks' settings, kernel attributes and occupancy, and a
// kernel launch, whose configuration is checked against the target before the
// scheduler runs its grid (scheduler.cpp).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "emu/internal.h"
#include "emu/symbols.h"

namespace wb::emu {
using namespace internal;

namespace {

// Each error code the emulator raises: the CUDA runtime's name for it and its words.
struct ErrorText {
  int code;
  const char* name;
  const char* words;
};
constexpr ErrorText kErrors[] = {
    {kSuccess, "cudaSuccess", "no error"},
    {kInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {kMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {kInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {kInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {kIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {kLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {kMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
    {kLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {kNotSupported, "cudaErrorNotSupported", "operation not supported"},
};
constexpr ErrorText kUnknownError{-1, "cudaErrorUnknown", "unknown error"};

const ErrorText& error_text(int code) {
  for (const ErrorText& e : kErrors)
    if (e.code == code) return e;
  return kUnknownError;
}

}  // namespace

const char* error_name(int code) { return error_text(code).name; }

std::string error_string(int code) {
  std::string words = error_text(code).words;
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (code != kSuccess && code == c.sticky && !c.sticky_message.empty())
    words += " (emulator " + c.sticky_message + ")";
  else if (code != kSuccess && !c.last_message.empty())
    words += " (emulator: " + c.last_message + ")";
  return words;
}

int last_error(bool reset_it) {
  Context& c = context();
  if (c.sticky != kSuccess) return c.sticky;
  const int code = reset_it ? c.last.exchange(kSuccess) : c.last.load();
  return code;
}

int fail(int code, std::string message) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.last = code;
  c.last_message = std::move(message);
  return code;
}

int sticky_error() { return context().sticky; }

int fault(int code, std::string message) {
  set_sticky(code, message);
  return code;
}

std::string fault_message() {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.sticky_message;
}

void reset() {
  abandon_capture("reset", "the emulated context was reset");
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.sticky = kSuccess;
  c.sticky_message.clear();
  c.last = kSuccess;
  c.last_message.clear();
}

void set_schedule(Schedule s) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.schedule = s;
  c.launches = 0;
}

Schedule schedule() {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.schedule;
}

bool parallel_blocks() { return !WB_EMU_TSAN; }

void set_work(std::string what) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.work = std::move(what);
}

void set_counting(bool on, uint64_t sample_blocks, bool only_sampled) {
  if (on && !reports_accesses())
    throw std::logic_error(std::string("counting needs the plain build's access reports (this is the ") + flavour() +
                           " flavour)");
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.counting = on;
  c.sample_blocks = on ? sample_blocks : 0;
  c.only_sampled = on && sample_blocks > 0 && only_sampled;
}

bool counting() {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.counting;
}

bool count_library_call(const std::string& what, double flops, double bytes,
                        std::optional<LaunchCounters::Gemm> gemm) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.counting) return true;
  LaunchCounters call;
  call.kernel = what;
  call.library_flops = flops;
  call.library_bytes = bytes;
  call.library_gemm = gemm;
  c.counters.push_back(std::move(call));
  return !c.only_sampled;
}

std::vector<LaunchCounters> take_counters() {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  return std::exchange(c.counters, {});
}

void set_strict_sync(bool strict) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.strict_sync = strict;
}

std::vector<std::string> take_notes() {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::vector<std::string> notes;
  notes.swap(c.notes);
  c.noted.clear();
  return notes;
}

const char* flavour() { return WB_EMU_ASAN ? "address" : WB_EMU_TSAN ? "thread" : "plain"; }

int set_max_dynamic_shared(const void* kernel, int bytes) {
  if (planning()) return kSuccess;  // the plan's check compares the launch with the device's limit
  if (const int sticky = sticky_error()) return sticky;
  if (bytes < 0 || std::size_t(bytes) > target().max_shared_per_block_optin)
    return fail(kInvalidValue, "cudaFuncSetAttribute: " + std::to_string(bytes) +
                                   " bytes of dynamic shared memory, more than " + target().name + "'s " +
                                   std::to_string(target().max_shared_per_block_optin));
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.max_dynamic_shared[kernel] = bytes;
  return kSuccess;
}

int occupancy(int* blocks, const void*, int block_threads, std::size_t dynamic_shared) {
  const Target& t = target();
  if (block_threads <= 0 || block_threads > t.max_threads_per_block) return fail(kInvalidValue, "occupancy query");
  int n = std::min(t.max_blocks_per_multiprocessor, t.max_threads_per_multiprocessor / block_threads);
  const std::size_t per_block = dynamic_shared + t.reserved_shared_per_block;
  n = std::min<int>(n, int(t.shared_per_multiprocessor / per_block));
  *blocks = n;
  return kSuccess;
}

namespace {
thread_local LaunchPlan* tls_plan = nullptr;
}

LaunchPlan::LaunchPlan() : outer_(tls_plan) { tls_plan = this; }
LaunchPlan::~LaunchPlan() { tls_plan = outer_; }
void LaunchPlan::record(const LaunchSpec& spec) {
  launches_.push_back(PlannedLaunch{spec.kernel, spec.text, spec.file, spec.grid, spec.block, spec.dynamic_shared});
}
bool planning() { return tls_plan != nullptr; }

namespace {
// This thread's capture: whether it is on, what it recorded, and what abandoned the
// last one (for end_capture's message).
struct CaptureState {
  bool active = false;
  Graph graph;
  std::string abandoned;
};
thread_local CaptureState tls_capture;

std::string current_work() {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.work;
}

std::string capture_message(const std::string& call, const std::string& why) {
  const std::string work = current_work();
  return call + " inside a CUDA-graph capture (" +
         (work.empty() ? std::string("no work named") : "while running " + work) + "): " + why;
}
}  // namespace

std::vector<std::string> Graph::operations() const {
  std::vector<std::string> names;
  for (const Operation& op : operations_) names.push_back(op.what);
  return names;
}

int Graph::replay() const {
  for (const Operation& op : operations_)
    if (const int code = op.run()) return code;
  return kSuccess;
}

void begin_capture() {
  if (tls_capture.active) refuse_in_capture("begin_capture", "captures do not nest");
  tls_capture = CaptureState{};
  tls_capture.active = true;
}

Graph end_capture() {
  if (!tls_capture.active)
    throw CaptureError(tls_capture.abandoned.empty()
                           ? std::string("end_capture without begin_capture: this thread is not capturing")
                           : "end_capture: the capture was abandoned: " + tls_capture.abandoned);
  Graph g = std::move(tls_capture.graph);
  tls_capture = CaptureState{};
  return g;
}

bool capturing() { return tls_capture.active; }

bool record(std::string what, std::function<int()> run) {
  if (!tls_capture.active) return false;
  tls_capture.graph.operations_.push_back(Graph::Operation{std::move(what), std::move(run)});
  return true;
}

void abandon_capture(const std::string& call, const std::string& why) noexcept {
  if (!tls_capture.active) return;
  try {
    std::string message = capture_message(call, why);
    tls_capture = CaptureState{};
    tls_capture.abandoned = std::move(message);
  } catch (...) {
    tls_capture = CaptureState{};
  }
}

void refuse_in_capture(const std::string& call, const std::string& why) {
  if (!tls_capture.active) return;
  std::string message = capture_message(call, why);
  tls_capture = CaptureState{};
  tls_capture.abandoned = message;
  throw CaptureError(message);
}

namespace {

// The launch text up to its first top-level comma: the kernel as the launch spells it.
std::string launched_name(const char* text) {
  std::string t = text ? text : "";
  int depth = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char ch = t[i];
    if (ch == '<' || ch == '(' || ch == '[') ++depth;
    if (ch == '>' || ch == ')' || ch == ']') --depth;
    if (ch == ',' && depth == 0) return t.substr(0, i);
  }
  return t;
}

// The kernel's name for messages: its function as the program's symbol table names it,
// without its namespaces ("gemm_cp_async<128, 32, 0, true, false>": a launch through a
// pointer spells it "kernel", a template launch "k<kBug>"), or as the launch spells it
// where the program has no symbol table.
std::string kernel_name(const LaunchSpec& spec) {
  const std::optional<KernelSymbol> symbol = spec.kernel ? kernel_symbol(spec.kernel) : std::nullopt;
  if (!symbol) return launched_name(spec.text);
  const std::string& name = symbol->name;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < name.size() && name[i] != '<'; ++i)
    if (name[i] == ':' && name[i + 1] == ':') start = i + 2;
  return name.substr(start);
}

// A launch's configuration against the target's limits: a refusal is the calling
// thread's last error (not sticky), as cudaLaunchKernel's. *limit: the shared memory a
// block may use, static and dynamic (above 48 KiB, the kernel's opt-in).
// The device buffers a counted launch touched, whole: a sampled launch touches the
// buffers the whole grid does, which bounds what the grid can need from memory.
uint64_t touched_bytes(const Launch& run) {
  const auto& r = run.device_ranges;
  std::vector<char> touched(r.size(), 0);
  for (const auto* sectors : {&run.read_sectors, &run.written_sectors})
    for (uint64_t s : *sectors) {
      auto it = std::upper_bound(r.begin(), r.end(), std::make_pair(std::uintptr_t(s * 32), ~std::uintptr_t(0)));
      if (it != r.begin() && s * 32 < std::prev(it)->second) touched[std::size_t(std::prev(it) - r.begin())] = 1;
    }
  uint64_t bytes = 0;
  for (std::size_t i = 0; i < r.size(); ++i)
    if (touched[i]) bytes += r[i].second - r[i].first;
  return bytes;
}

int check_configuration(const LaunchSpec& spec, const std::string& name, std::size_t* limit) {
  Context& c = context();
  const Target& t = target();
  const Dim3 g = spec.grid, b = spec.block;
  const uint64_t threads = uint64_t(b.x) * b.y * b.z;
  auto refuse = [&](int code, const std::string& why) { return fail(code, "kernel " + name + ": " + why); };
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
    return refuse(kInvalidConfiguration, "grid " + dim_text(g) + " or block " + dim_text(b) + " has a zero extent");
  if (threads > uint64_t(t.max_threads_per_block) || b.x > t.max_block[0] || b.y > t.max_block[1] ||
      b.z > t.max_block[2])
    return refuse(kInvalidConfiguration, "block " + dim_text(b) + " of " + std::to_string(threads) +
                                             " threads exceeds " + t.name + "'s limits (1024 threads, z <= 64)");
  if (g.x > t.max_grid[0] || g.y > t.max_grid[1] || g.z > t.max_grid[2])
    return refuse(kInvalidConfiguration,
                  "grid " + dim_text(g) + " exceeds " + t.name + "'s limits (x < 2^31, y and z <= 65535)");
  *limit = t.static_shared_per_block;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.max_dynamic_shared.find(spec.kernel);
    if (it != c.max_dynamic_shared.end()) *limit = std::max<std::size_t>(*limit, std::size_t(it->second));
  }
  if (spec.dynamic_shared > *limit)
    return refuse(
        kInvalidValue,
        std::to_string(spec.dynamic_shared) + " bytes of dynamic shared memory, more than " + std::to_string(*limit) +
            (*limit == t.static_shared_per_block ? " (above 48 KiB a kernel opts in with cudaFuncSetAttribute)"
                                                 : " (its cudaFuncSetAttribute opt-in)"));
  return kSuccess;
}

}  // namespace

namespace {

// A launch's name for messages: the kernel, and the work it belongs to.
std::string launch_name(const LaunchSpec& spec, const std::string& work) {
  std::string name = kernel_name(spec);
  if (!work.empty()) name += " (" + work + ")";
  return name;
}

int run_launch(const LaunchSpec& spec, const std::function<void()>& body, const std::string& work);

// A launch in a capture: its configuration checked now, then recorded with copies of
// the spec's texts, the body (which owns the kernel's arguments) and the work.
int record_launch(const LaunchSpec& spec, const std::function<void()>& body) {
  if (const int sticky = sticky_error()) return sticky;
  const std::string work = current_work();
  const std::string name = launch_name(spec, work);
  std::size_t limit = 0;
  if (const int refused = check_configuration(spec, name, &limit)) return refused;
  auto texts = std::make_shared<const std::pair<std::string, std::string>>(spec.text ? spec.text : "",
                                                                           spec.file ? spec.file : "");
  record("kernel " + name, [spec, texts, body, work]() {
    LaunchSpec s = spec;
    s.text = texts->first.c_str();
    s.file = texts->second.c_str();
    return run_launch(s, body, work);
  });
  return kSuccess;
}

}  // namespace

int launch(const LaunchSpec& spec, const std::function<void()>& body) {
  if (tls_plan) {
    tls_plan->record(spec);
    return kSuccess;
  }
  if (capturing()) return record_launch(spec, body);
  return run_launch(spec, body, current_work());
}

namespace {

int run_launch(const LaunchSpec& spec, const std::function<void()>& body, const std::string& work) {
  Context& c = context();
  if (const int sticky = sticky_error()) return sticky;
  std::string name = launch_name(spec, work);
  std::size_t limit = 0;
  if (const int refused = check_configuration(spec, name, &limit)) return refused;

  const Dim3 g = spec.grid, b = spec.block;
  Launch run;
  run.spec = &spec;
  run.body = &body;
  run.name = name;
  run.schedule = schedule();
  run.number = c.launches++;
  run.shared_limit = limit;
  run.threads = uint64_t(b.x) * b.y * b.z * uint64_t(g.x) * g.y * g.z;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    run.strict_sync = c.strict_sync;
    run.counting = c.counting;
    // The device buffers: what counting counts and what the racecheck across blocks of
    // the interleaving pass watches (scheduler.cpp, check_cross_block_write).
    if (run.counting || (run.schedule.interleave && reports_accesses()))
      for (const auto& [data, a] : c.allocations) run.device_ranges.emplace_back(data, data + a.bytes);
    if (run.counting) {
      run.counted_blocks = sampled_blocks(uint64_t(g.x) * g.y * g.z, c.sample_blocks);
      run.only_sampled = c.only_sampled && !run.counted_blocks.empty();
    }
  }
  run_grid(run);
  if (run.counting) {
    LaunchCounters counted;
    counted.kernel = name;
    counted.function = spec.kernel;
    counted.file = spec.file ? spec.file : "";
    counted.grid = g;
    counted.block = b;
    counted.dynamic_shared = spec.dynamic_shared;
    counted.blocks = uint64_t(g.x) * g.y * g.z;
    counted.counted_blocks = run.counted_blocks.empty() ? counted.blocks : run.counted_blocks.size();
    counted.warps = counted.blocks * ((uint64_t(b.x) * b.y * b.z + 31) / 32);
    counted.counted_warps = run.counted_warps;
    for (const auto& entry : run.sites) counted.sites.push_back(entry.second);
    counted.read_footprint = {run.read_warp_sectors, run.read_sectors.size(), run.reading_warps, run.read_block_sectors,
                              run.reading_blocks};
    counted.write_footprint = {run.written_warp_sectors, run.written_sectors.size(), run.writing_warps,
                               run.written_block_sectors, run.writing_blocks};
    counted.touched_bytes = touched_bytes(run);
    counted.atomic_ops = run.atomic_ops;
    counted.atomic_sector_ops = run.atomic_sector_ops;
    counted.atomic_sectors = {run.atomic_warp_sectors, run.atomic_sectors.size(), run.atomic_warps,
                              run.atomic_block_sectors, run.atomic_blocks};
    std::lock_guard<std::mutex> lock(c.mutex);
    c.counters.push_back(std::move(counted));
  }
  if (run.faulted) {
    set_sticky(run.fault.code, run.fault.message);
    return run.fault.code;
  }
  const std::string canaries = device_canaries(name);
  if (!canaries.empty()) {
    set_sticky(kIllegalAddress, canaries);
    return kIllegalAddress;
  }
  return kSuccess;
}

}  // namespace

}  // namespace wb::emu
