#pragma once
// The SIMT emulator behind the `emu` backend. CUDA kernels compiled by the host
// compiler (emu/shim.h supplies the CUDA surface they use) run here: every
// block's threads as fibers on one OS thread, the blocks of a grid in parallel on
// OpenMP threads, with the launch limits of a target GPU (sm_90 unless told otherwise)
// and checks no other backend has:
//   memcheck   canaries before and after every device buffer and shared array,
//              checked after each block and launch (exact-size allocations and
//              AddressSanitizer redzones in the ASan build instead);
//   initcheck  shared memory and device allocations start as 0xFF bytes (NaN, -1);
//   synccheck  a __syncthreads that not every live thread of the block reaches at the
//              same call, a warp collective whose mask names a lane that has exited
//              or waits elsewhere, a deadlock;
//   racecheck  in the ThreadSanitizer build every thread is a TSan fiber, switches
//              imply no ordering, and barriers, collectives and kernel boundaries are
//              the only synchronisation, so unordered accesses to one word are races;
//              in every build the threads of a block can run in a seeded shuffled
//              order, so that order-dependent results show.
// A fault (memcheck, synccheck, __trap) fails the launch and makes the emulated
// context sticky, as on a GPU: every later call returns the error until reset().
// Emulation proves logic, never speed.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wb::emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// The GPU the emulator stands in for: what a launch may ask of it.
struct Target {
  std::string name;  // "sm_90"
  int major = 9, minor = 0;
  std::string device_name;  // "NVIDIA H100 (emulated sm_90)"
  int multiprocessors = 132;
  int max_threads_per_block = 1024;
  unsigned max_block[3] = {1024, 1024, 64};
  unsigned max_grid[3] = {2147483647u, 65535u, 65535u};
  std::size_t static_shared_per_block = 48 * 1024;  // without opt-in, static and dynamic
  std::size_t max_shared_per_block_optin = 227 * 1024;
  std::size_t shared_per_multiprocessor = 228 * 1024;
  std::size_t reserved_shared_per_block = 1024;
  int max_threads_per_multiprocessor = 2048;
  int max_blocks_per_multiprocessor = 32;
  int registers_per_block = 65536;
  int registers_per_multiprocessor = 65536;
};

const Target& target();
// sm_80, sm_86, sm_89 or sm_90; throws std::invalid_argument naming them.
void set_target(std::string_view name);
std::vector<std::string> target_names();

// Error codes, with the values of the CUDA runtime's cudaError_t.
enum Code : int {
  kSuccess = 0,
  kInvalidValue = 1,
  kMemoryAllocation = 2,
  kInvalidConfiguration = 9,
  kInvalidDeviceFunction = 98,
  kIllegalAddress = 700,
  kLaunchOutOfResources = 701,
  kMisalignedAddress = 716,
  kLaunchFailure = 719,
  kNotSupported = 801,
};
const char* error_name(int code);
// The runtime's words; for the sticky fault, followed by what the emulator found.
std::string error_string(int code);

// cudaGetLastError (reset = true) and cudaPeekAtLastError. A sticky fault is returned
// by every call until reset().
int last_error(bool reset);
// Sets the last error of a call that failed without a fault (a refused launch).
int fail(int code, std::string message);
int sticky_error();
// A fault found outside a kernel (an emulated library call reading outside device
// memory): sticky, like a kernel's.
int fault(int code, std::string message);
// What the sticky fault was: "synccheck: kernel k, block (0,0,0), thread (3,0,0): ...".
std::string fault_message();
// Clears the sticky fault and the last error: a fresh context (a new process on a GPU).
void reset();

// Device memory: exact-size heap allocations, filled with 0xFF (NaN, -1), with canary
// bytes before and after (unless built with AddressSanitizer, whose redzones do
// better). Throws std::bad_alloc.
void* device_malloc(std::size_t bytes);
void device_free(void* p) noexcept;
// Whether [p, p + bytes) lies inside one live allocation.
bool in_device_memory(const void* p, std::size_t bytes);
// memset on device memory; kIllegalAddress outside every allocation.
int device_memset(void* p, int value, std::size_t bytes);

// How a launch's threads and blocks take turns.
//   shuffled     a block's threads are resumed in a permutation seeded by (seed,
//                launch, block) instead of forward;
//   warps_alone  each warp of a block runs by itself from one barrier to the next (its
//                lanes round after round until none can run), the warps one after
//                another in an order drawn for each barrier interval from the seed:
//                forward, reversed or shuffled. So a warp runs ahead of the others into
//                whatever it does before the next barrier (a cp.async refill of a buffer
//                the others have yet to read) while the threads of one warp stay
//                together. A warp whose lane polls (a volatile or atomic read) lets the
//                next warp run, so a warp waiting for a flag that another warp sets
//                makes progress;
//   interleave   threads also yield at global and shared memory accesses, so that a
//                read-modify-write race loses updates: at every access in launches of
//                up to 4096 threads, at one in `period` (picked by a generator seeded
//                like the order) in larger ones. The plain build only
//                (emu/tsan_hooks.cpp: the accesses are reported by the compiler's
//                ThreadSanitizer instrumentation, with the emulator's own runtime
//                behind it);
//   blocks       parallel: on OpenMP threads, in index order; forward: one at a time;
//                serial_if_polling: one at a time, block 0 first and the others in a
//                seeded shuffle, for the kernels seen polling (a volatile or atomic read)
//                in an earlier launch, so that block 0, the usual victim, waiting for a
//                flag or counter a later block sets, faults (the watchdog: a GPU does not
//                promise that a grid's blocks run concurrently), in parallel for others;
//                shuffled: in parallel where the build can, started reversed or shuffled
//                with block 0 last (drawn per launch), so that block 0 never runs first.
// Atomic and volatile accesses always yield (where accesses are reported), so that a
// thread spinning on a flag lets the thread that sets it run, and a watchdog turns a
// block whose threads can only spin into a fault.
struct Schedule {
  bool shuffled = false;
  uint64_t seed = 0;
  bool interleave = false;
  unsigned period = 1;
  bool warps_alone = false;
  enum class Blocks { parallel, forward, shuffled, serial_if_polling } blocks = Blocks::parallel;
};
void set_schedule(Schedule s);
Schedule schedule();
// What the launches that follow belong to, for the fault messages, which name it after
// the kernel ("kernel gemm_cp_async<...> (matmul_forward_bf16 cuda/6 tile=128,...)"):
// the variant and configuration wb runs. Empty: nothing (the default).
void set_work(std::string what);
// A __syncthreads reached while other threads of the block have exited: a note by
// default (take_notes), a synccheck fault when strict.
void set_strict_sync(bool strict);
// What the checks noted since the last call (one note per kernel and call site), and
// forgets them.
std::vector<std::string> take_notes();
// Whether this build reports memory accesses to the scheduler (the plain build's
// instrumented kernels), so that threads can yield at them.
bool reports_accesses();
// Whether this build can run blocks on several OS threads (not under TSan).
bool parallel_blocks();
// "plain", "address" (ASan + UBSan) or "thread" (TSan): which checks this build has.
const char* flavour();

// ---------------------------------------------------------------------------------
// Counters: what Nsight Compute counts of memory accesses, from the addresses and the
// masks that each warp presents (the plain build only, where reports_accesses()). With
// counting on, every global and shared access of a kernel's threads reaches the
// scheduler, which keeps the lanes of a block in step (each thread yields at every
// access) and groups the accesses into the requests a SIMT machine issues: the lanes
// of one warp that reach the same static access site (the access's return address) for
// the same time, in the same turn. A request is counted when every live lane of its
// warp has made it, or at the end of the block (lanes that diverged away are inactive
// in it), or when its turn ends: a warp-level synchronisation (__syncwarp, a shuffle, a
// vote, a match, a warp matrix function, __syncthreads) that some of its lanes passed
// after making it while others the synchronisation names had not yet made it. Those
// make it in a later turn, a request of their own, as a GPU issues the instruction
// again for them (two half-warps taking turns, a __syncwarp between: two requests of 16
// lanes, not one of 32). "The same time" is each lane's count of its visits to the site
// since its whole warp last synchronised.
//   global: the 32-byte sectors the active lanes touch, against the ideal, the unique
//           bytes they need / 32 rounded up (a coalesced float load by a full warp: 4
//           of 4; a stride of 2 floats: 8 of 4);
//   shared: wavefronts, against the ideal, the unique bytes / 128 rounded up. 32 banks
//           of 4 bytes; lanes reading one word share it (broadcast); 8- and 16-byte
//           accesses in phases of 16 and 8 lanes (128 bytes each), as the hardware
//           serves them; each phase takes as many wavefronts as the most distinct words
//           any bank holds for it.
// Every request also counts its active lanes (divergence), and so does every warp
// collective, as a site of its own.
struct AccessCounts {
  uint64_t requests = 0;
  uint64_t active_lanes = 0;                      // summed over the requests
  uint64_t sectors = 0, ideal_sectors = 0;        // global memory: 32-byte sectors
  uint64_t wavefronts = 0, ideal_wavefronts = 0;  // shared memory
  AccessCounts& operator+=(const AccessCounts& more);
};
// Every count of AccessCounts, for what is done to each alike: a block's added into its
// launch's, a kernel's launches summed, a sample scaled to the whole grid (wb).
inline constexpr uint64_t AccessCounts::*kAccessCounts[] = {&AccessCounts::requests,   &AccessCounts::active_lanes,
                                                            &AccessCounts::sectors,    &AccessCounts::ideal_sectors,
                                                            &AccessCounts::wavefronts, &AccessCounts::ideal_wavefronts};
inline AccessCounts& AccessCounts::operator+=(const AccessCounts& more) {
  for (uint64_t AccessCounts::*n : kAccessCounts) this->*n += more.*n;
  return *this;
}
struct SiteCounters : AccessCounts {
  const void* pc = nullptr;  // the access's return address (code_location names file:line)
  // A tensor-core instruction's request (count_instruction): its call's "file:line",
  // and pc is only the site's identity.
  const char* instruction_site = nullptr;
  // A warp collective (a shuffle, a vote, __syncwarp, mma.sync, ldmatrix's exchange):
  // only requests (each a completed group) and active lanes; instruction_site names it.
  bool collective = false;
  bool shared = false;  // shared memory, else global
  bool store = false;   // a write (or an atomic), else a read
  unsigned bytes = 0;   // per lane and access: 1, 2, 4, 8 or 16
};
struct LaunchCounters {
  std::string kernel;              // the launch's name for messages ("k<4> (op cuda/3 ...)")
  const void* function = nullptr;  // the kernel (emu/symbols.h kernel_symbol names it)
  std::string file;                // the launch's source file
  Dim3 grid, block;
  std::size_t dynamic_shared = 0;
  uint64_t blocks = 0;                          // in the grid
  uint64_t counted_blocks = 0;                  // of them: every one, or the sample (set_counting)
  uint64_t warps = 0;                           // in the grid
  uint64_t counted_warps = 0;                   // of them: every warp of a counted block, or a sample (only_sampled)
  double library_flops = 0, library_bytes = 0;  // an emulated library call's (function null)
  // A library GEMM's problem (C is m x n, k deep, `batch` of them): what a model of the
  // library's tiles and waves needs (workbench/runtime/predict.h).
  struct Gemm {
    int64_t m = 0, n = 0, k = 0, batch = 1;
  };
  std::optional<Gemm> library_gemm;
  std::vector<SiteCounters> sites;              // ordered by pc, then by kind
  // The global sectors the counted warps touched, as memory behind the caches sees
  // them, reads and writes apart (a sector both read and written is in both): each
  // counted warp's distinct sectors summed over the warps (per_warp), the distinct
  // sectors of all counted warps together (distinct), and the counted warps that touched
  // any (warps); and block by block, each counted block's distinct sectors summed over
  // the blocks (per_block) and the counted blocks that touched any (blocks).
  // per_warp - per_block is what a block's counted warps share, per_block - distinct
  // what the counted blocks share, from which wb estimates a whole grid's
  // (docs/counters.md).
  struct Footprint {
    uint64_t per_warp = 0, distinct = 0, warps = 0;
    uint64_t per_block = 0, blocks = 0;
  } read_footprint, write_footprint;
  uint64_t touched_bytes = 0;  // the device buffers the counted accesses touched, whole
  // Global atomics of the counted warps: the lanes' operations; the sectors their
  // requests touched, summed over the requests (atomic_sector_ops: the operations the
  // L2's atomic units perform, a request's lanes on one sector together); and the
  // distinct sectors they went to (a Footprint of sectors). Operations on one sector are
  // serialised where it lives, so atomic_sector_ops / sectors is the contention.
  uint64_t atomic_ops = 0, atomic_sector_ops = 0;
  Footprint atomic_sectors;
};
// Turns counting on or off for the launches that follow (off by default: it costs a
// thread switch per access). With sample_blocks = N > 0, only N blocks of each grid
// are counted (every block still runs): block 0, the last block and N - 2 evenly
// between them, the same ones in every run, so that a large grid costs what N blocks
// cost. Throws std::logic_error where this build reports no accesses.
// With only_sampled, the blocks not sampled do not run at all, and of a sampled block
// only kSampledWarps warps count, the first, the last and evenly between (the others
// run without reporting their accesses: a block of 1024 threads costs what 4 warps
// cost; a block of up to 4 warps counts whole): a counting-only launch for wb predict,
// whose outputs are not meant to be read (a kernel whose blocks wait for one another,
// or a later kernel reading a skipped block's output, sees what the skipped blocks
// left: only their counts are wanted).
inline constexpr std::size_t kSampledWarps = 4;
void set_counting(bool on, uint64_t sample_blocks = 0, bool only_sampled = false);
bool counting();
// The counters of the launches since the last call, in launch order, and forgets them.
std::vector<LaunchCounters> take_counters();
// The tensor-core instruction models (emu/tensor_core_instructions.h) with counting on:
// the calling lane's part of the request the hardware issues (ldmatrix: a 16-byte row
// of shared memory, or none from lanes that give no row; cp.async: its global read and
// its shared write), counted at the call's site; and a scope in which the model's own
// accesses (ldmatrix's per-element reads, cp.async's poison and landing) are not
// counted. Both do nothing when the calling thread's block is not counted.
struct Site;
void count_instruction(Site at, const void* address, std::size_t bytes, bool shared, bool store, bool gives = true);
// A scope that changes what the calling thread does until it ends (its constructor
// changes it, its destructor puts it back): never copied, which would put it back twice.
class ThreadScope {
 public:
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 protected:
  ThreadScope() = default;
  ~ThreadScope() = default;
};
class UncountedScope : ThreadScope {
 public:
  UncountedScope();
  ~UncountedScope();
};
// An emulated library call (cuBLAS) while counting: a library's kernels are not wb's and
// the emulator computes the call on the host, so it is listed among the launches with
// no blocks, and a report can say what it did not count.
// `flops` and `bytes`: what the call computes and the fewest bytes it moves. Returns
// whether the call should compute: false while counting with only the sampled blocks
// running (set_counting's only_sampled), when no output is validated and the call's
// arithmetic on the host (the classifier's GEMMs: hundreds of GFLOP at the trainer's
// shapes) would cost minutes for nothing.
bool count_library_call(const std::string& what, double flops, double bytes,
                        std::optional<LaunchCounters::Gemm> gemm = std::nullopt);

// cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes).
int set_max_dynamic_shared(const void* kernel, int bytes);
// cudaOccupancyMaxActiveBlocksPerMultiprocessor, answered for the target (registers
// unknown: assumed not to limit).
int occupancy(int* blocks, const void* kernel, int block_threads, std::size_t dynamic_shared);

// One launch. `text` is the launch's source text ("kernel<4>, grid, block, ..."); the
// kernel's name is taken from it for messages.
struct LaunchSpec {
  const char* text = "";
  const char* file = "";
  int line = 0;
  const void* kernel = nullptr;
  Dim3 grid, block;
  std::size_t dynamic_shared = 0;
};
// Runs body once per thread of the grid. Returns a cudaError_t value: 0, a refused
// configuration (not sticky), or the fault the checks found (sticky).
int launch(const LaunchSpec& spec, const std::function<void()>& body);

// A configuration's launches, listed without running them: while a LaunchPlan lives on
// a thread, launch() records each launch and returns success, and device memsets and
// the emulated cuBLAS calls do nothing, so that the pointers may be placeholders. The
// launch limits known at build time (contract/launch_resources.h) are checked on it.
struct PlannedLaunch {
  const void* kernel = nullptr;
  std::string text;  // the launch's source text
  std::string file;  // the launch's source file
  Dim3 grid, block;
  std::size_t dynamic_shared = 0;
};
class LaunchPlan : ThreadScope {
 public:
  LaunchPlan();
  ~LaunchPlan();
  const std::vector<PlannedLaunch>& launches() const { return launches_; }
  void record(const LaunchSpec& spec);

 private:
  std::vector<PlannedLaunch> launches_;
  LaunchPlan* outer_;
};
// Whether a LaunchPlan is recording on this thread.
bool planning();

// ---------------------------------------------------------------------------------
// CUDA-graph capture, as cudaStreamBeginCapture (cudaStreamCaptureModeThreadLocal),
// cudaStreamEndCapture and cudaGraphLaunch do it. Between begin_capture() and
// end_capture() on a thread, the stream operations that thread issues are recorded,
// not run, with their arguments by value:
//   kernel launches    the body owns copies of the kernel's arguments (WB_LAUNCH,
//                      device/cuda/dialect.cuh), the work (set_work) is the one named
//                      at capture; the configuration is checked when recorded, as
//                      cudaLaunchKernel checks it in a capture;
//   device memsets     cudaMemsetAsync (device_memset);
//   device copies      cudaMemcpyAsync from device to device (device_memcpy);
//   cuBLAS calls       the handle's settings, and alpha and beta when they are host
//                      pointers, as they were at the call (emu/cublas.cpp).
// Graph::replay() runs them in order, each with every check of a direct call (bounds,
// canaries, barriers, races, poison). A LaunchPlan on the thread takes precedence.
// What a captured step may not do throws CaptureError, whose message names the call and
// the work: an allocation, a free, a synchronisation, a copy to the host, a copy from
// (pageable) host memory. The capture is abandoned first: the recording is dropped and
// the thread is no longer capturing, so the caller may go on (and capture again).
struct CaptureError : std::logic_error {
  using std::logic_error::logic_error;
};
class Graph {
 public:
  Graph() = default;
  // How many operations it holds, and their names in order ("kernel add_bias_vec4
  // (matmul_forward cuda/5 ...)", "cublasSgemm", "cudaMemsetAsync of 64 bytes").
  std::size_t size() const { return operations_.size(); }
  std::vector<std::string> operations() const;
  // Runs the operations in order; stops at the first that fails and returns its error
  // (a cudaError_t value: a refused configuration, or the sticky fault), else 0.
  int replay() const;

 private:
  struct Operation {
    std::string what;
    std::function<int()> run;
  };
  std::vector<Operation> operations_;
  friend Graph end_capture();
  friend bool record(std::string what, std::function<int()> run);
};
// Starts capturing on this thread; CaptureError when it already is (captures do not nest).
void begin_capture();
// The recorded operations, and the thread no longer captures. CaptureError when it was
// not capturing; after an abandoned capture, the message says what abandoned it.
Graph end_capture();
bool capturing();
// When this thread is capturing, appends `run` (named `what`) to the recording and
// returns true; otherwise returns false and the caller runs the operation itself.
bool record(std::string what, std::function<int()> run);
// When this thread is capturing: abandons the capture and throws CaptureError
// "<call> inside a CUDA-graph capture (while running <work>): <why>". Else nothing.
void refuse_in_capture(const std::string& call, const std::string& why);
// The same without throwing, for the calls that cannot (a free): end_capture() throws
// the message instead.
void abandon_capture(const std::string& call, const std::string& why) noexcept;

// cudaMemcpy and cudaMemcpyAsync (`call` names which, for messages; `synchronous`:
// cudaMemcpy, which uses the legacy default stream). The kinds of cudaMemcpyKind; a
// device side outside every device buffer is a memcheck fault. In a capture only an
// asynchronous device-to-device copy is recorded; every other copy is refused.
enum class CopyKind { host_to_host = 0, host_to_device = 1, device_to_host = 2, device_to_device = 3, by_address = 4 };
int device_memcpy(void* dst, const void* src, std::size_t bytes, CopyKind kind, const char* call, bool synchronous);

// Inside a kernel: the builtins of the calling thread (threadIdx, blockIdx, ...).
struct Builtins {
  Dim3 thread_idx, block_idx, block_dim, grid_dim;
};
namespace detail {
// Set by the scheduler at every switch. An inline variable with a constant initialiser,
// so that no translation unit calls a TLS wrapper that might (re)initialise it.
inline thread_local const Builtins* current_builtins = nullptr;
// Whether this OS thread runs a kernel's thread of a block in the interleaving pass or
// with counting on: plain accesses are reported only then.
inline thread_local bool report_plain_accesses = false;
}  // namespace detail
#if defined(__SANITIZE_THREAD__)
// A copy, made where ThreadSanitizer does not look: the scheduler writes the builtins,
// the kernel only reads its copy.
__attribute__((no_sanitize("thread"))) inline Builtins builtins() { return *detail::current_builtins; }
#else
inline const Builtins& builtins() { return *detail::current_builtins; }
#endif

// A memory access of a kernel, as the instrumented build reports it
// (emu/tsan_hooks.cpp): plain and volatile ones before they happen, atomic ones
// after (a read-modify-write that left the value as it was is an atomic_read).
enum class Access : uint8_t { read, write, volatile_read, volatile_write, atomic_read, atomic_write };
// Called only inside a kernel (detail::current_builtins set). Yields to another thread
// of the block at volatile and atomic reads (polls), and at one plain access in the
// schedule's period in the interleaving pass; feeds the watchdog. `pc` is the
// instruction after the access's call, for messages.
void on_access(const void* address, std::size_t bytes, Access kind, const void* pc);

// Where in the source a barrier or collective was called, for messages.
struct Site {
  const char* file;
  int line;
};

void syncthreads(Site site);
// Warp collectives. Each lane in `mask` (which must include the calling lane) deposits
// `value`; when all of them have arrived at the same call with the same mask (lanes
// with disjoint masks at one call form separate groups), each gets the value of
// its source lane: shfl (lane src), xor (lane ^ arg), up (lane - arg), down (lane +
// arg) within segments of `width` lanes (its own value past the segment's edge, as
// CUDA), and a poison value (all bits set) when the source lane is not in the mask.
enum class Exchange { index, bxor, up, down };
uint64_t shuffle(Site site, unsigned mask, uint64_t value, Exchange kind, int arg, int width);
// __ballot_sync: the mask of lanes (within mask) whose predicate is non-zero.
unsigned ballot(Site site, unsigned mask, bool predicate);
void syncwarp(Site site, unsigned mask);
// __activemask: the lanes of the warp that reach this call together (the others are
// elsewhere: at another barrier or collective, or exited).
unsigned active_mask(Site site);
// __match_any_sync: the lanes (within mask) whose value equals the caller's;
// __match_all_sync: mask when all values are equal (and *predicate 1), else 0.
unsigned match_any(Site site, unsigned mask, uint64_t value);
unsigned match_all(Site site, unsigned mask, uint64_t value, int* predicate);
[[noreturn]] void trap(Site site, const char* what);
// Warp matrix functions (nvcuda::wmma, emu/include/mma.h). Every lane of the
// warp meets at one call, as at a __syncwarp() of the full warp (a lane missing, exited
// or waiting elsewhere is a synccheck fault naming it); each deposits `value` and, when
// `values` is not null, gets every lane's deposit in values[lane]. `orders_memory`:
// the call orders the lanes' memory accesses as __syncwarp does (mma_sync's exchange of
// fragments between lanes); without it, it orders nothing (a load or store of a
// fragment: a lane reading what another wrote still needs a barrier). `what` names the
// function in messages ("wmma::load_matrix_sync").
void warp_matrix(Site site, const char* what, uint64_t value, uint64_t* values, bool orders_memory);
// A misused warp matrix function (a pointer not 32-byte aligned, a stride that is not a
// multiple of 16 bytes): a sticky fault with `code`, naming the call.
[[noreturn]] void warp_matrix_fault(Site site, int code, const std::string& what);
// The mapping of one kind of fragment (`kind`: a tag of its use, shape and element
// type) onto the lanes, for the schedule's seed: a permutation of the rows x cols
// elements. element[s] is the matrix element (row * cols + col) held in slot s = lane *
// (rows * cols / 32) + i, that is x[i] of that lane; owner (the next rows * cols
// entries) is its inverse. CUDA leaves the mapping unspecified, so each run picks
// another one: code that assumes a layout gives results that change with the seed.
// Inside a kernel, for its launch's seed; the tables live as long as the OS thread.
const uint16_t* fragment_layout(uint32_t kind, int rows, int cols);
const uint16_t* fragment_layout(uint32_t kind, int rows, int cols, uint64_t seed);

// A vector access of `bytes` (8 or 16) must be aligned to its size, as on a GPU; a
// misaligned one is a sticky cudaErrorMisalignedAddress fault.
void check_aligned(const void* p, std::size_t bytes);

// Static shared memory: one array per declaration and block, allocated (0xFF, with
// canaries) by the first thread of the block that reaches the declaration.
struct SharedDecl {
  const char* name;
  const char* file;
  int line;
};
void* shared_array(const SharedDecl& decl, std::size_t bytes, std::size_t align);
// The block's dynamic shared memory (the launch's dynamic_shared bytes).
void* dynamic_shared();

#if WB_EMU_INSTRUMENTED
// Float atomic add in the plain build's instrumented kernels: one reported access
// (emu/tsan_hooks.cpp), not the load and the compare-and-swap of its loop.
float atomic_add_float(float* address, float value);
inline float atomic_add(float* address, float value) { return atomic_add_float(address, value); }
#else
// Float atomic add: a compare-and-swap loop on the bits. Inline, so that it is
// compiled (and, under ThreadSanitizer, instrumented as an atomic) with the kernel.
inline float atomic_add(float* address, float value) {
  auto* p = reinterpret_cast<uint32_t*>(address);
  uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    float f;
    __builtin_memcpy(&f, &old, sizeof f);
    const float sum = f + value;
    uint32_t bits;
    __builtin_memcpy(&bits, &sum, sizeof bits);
    if (__atomic_compare_exchange_n(p, &old, bits, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return f;
  }
}
#endif

}  // namespace wb::emu
