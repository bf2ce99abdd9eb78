#pragma once
// What the parts of the SIMT emulator share (emu/emu.h is its public face): the
// context (sticky errors, device memory, kernel attributes), the model of a launch
// (its blocks, their threads and warps, the workers that run them) and the helpers
// every part reports faults with. Internal to emu/: no file outside it includes this.
//
//   target.cpp       the GPUs the emulator can stand for and their launch limits
//   memory.cpp       the context, device and shared memory with their canaries and
//                    guard pages, and the reports of a fault in memory
//   scheduler.cpp    threads on fibers, blocks and their barriers, the watchdog, the
//                    grid's blocks on the workers
//   access_checks.cpp  the reports of accesses: memcheck of reads, racecheck across
//                    blocks, the counters' and the scheduler's turn at each access
//   warp.cpp         warp collectives: shuffles, votes, __syncwarp, matches
//   tensor_core.cpp  warp matrix functions and the tensor-core instructions' side
//                    (emu/tensor_core_state.h)
//   runtime_api.cpp  the CUDA runtime's calls: errors, launch, schedule, attributes
//   counters.cpp     the counters: accesses grouped into warp-level requests, counted
#include <signal.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "emu/emu.h"
#include "emu/fiber.h"
#include "emu/tensor_core_state.h"

namespace wb::emu::internal {

// ---------------------------------------------------------------------------------
// The context (memory.cpp)

constexpr std::size_t kCanary = 256;  // bytes before and after every device buffer, at least
constexpr std::size_t kSharedCanary = 64;
constexpr unsigned char kPoisonByte = 0xFF;
// The plain build puts every device buffer between inaccessible guard regions, so that
// an access far past it faults (caught and reported as cudaErrorIllegalAddress): the
// buffer ends kCanary to 2 kCanary bytes before the guard after it.
constexpr bool kGuardPages = !WB_EMU_ASAN && !WB_EMU_TSAN;
constexpr std::size_t kGuardBytes = 64 * 1024;

struct Allocation {
  char* raw;  // what was allocated (mapped, with guard pages)
  std::size_t bytes;
  std::size_t raw_bytes = 0;  // the mapping's size (0: malloc'ed)
  char* front = nullptr;      // the canary before the data: [front, data)
  char* back = nullptr;       // the canary after it ends here
};

struct Context {
  std::mutex mutex;
  std::atomic<int> last{kSuccess};
  std::string last_message;
  std::atomic<int> sticky{kSuccess};
  std::string sticky_message;
  std::map<std::uintptr_t, Allocation> allocations;  // user address -> allocation
  std::map<const void*, int> max_dynamic_shared;     // cudaFuncSetAttribute
  Schedule schedule;
  std::atomic<uint64_t> launches{0};
  bool strict_sync = false;
  std::string work;  // set_work
  bool counting = false;                 // set_counting
  uint64_t sample_blocks = 0;            // set_counting: 0, every block
  bool only_sampled = false;             // set_counting: the other blocks do not run
  std::vector<LaunchCounters> counters;  // of the launches since take_counters
  std::set<const void*> polling_kernels;  // kernels seen polling (a volatile or atomic read)
  std::vector<std::string> notes;
  std::set<std::string> noted;  // kernel and site of each note: one note each
};

// The process's one context.
Context& context();
// Catches a kernel's access to a guard page; installed with the first device buffer
// that has guard pages.
void install_fault_handler();

// A fault that loses the context (the first wins); also the last error.
void set_sticky(int code, const std::string& message);

// A host allocation of `bytes` between canaries of `canary` bytes (none under ASan),
// filled with poison; *raw is what to free.
char* allocate_with_canaries(std::size_t bytes, std::size_t canary, std::size_t align, char** raw);

// ---------------------------------------------------------------------------------
// Blocks, threads and the scheduler (scheduler.cpp)

// A fault found while a block runs; thrown inside a fiber, caught at its entry.
struct Fault {
  int code;
  std::string message;
};

enum class State { ready, barrier, collective, done };

// matrix: a warp matrix function that orders nothing (load, store, fill); matrix_exchange:
// one that orders memory like __syncwarp (mma_sync's exchange of fragments).
enum class Collective { shuffle, vote, syncwarp, match_any, match_all, converge, matrix, matrix_exchange };

struct Thread {
  Builtins builtins;
  int linear = 0, lane = 0, warp = 0;
  State state = State::ready;
  fiber::context ctx = nullptr;
  fiber::Stack stack;
  fiber::Sanitizer san;
  Site wait_site{nullptr, 0};  // the barrier or collective it waits at
  bool started = false;
  // It came back to the scheduler at a reported access (a poll, or the interleaving
  // pass), not at a barrier, a collective or its end.
  bool yielded_at_access = false;
  // The access the scheduler is checking (canary_read reads its bytes), for the fault
  // handler: a fault there is that access's.
  const void* checking_pc = nullptr;
  // Inside a tensor-core instruction's model with counting on (UncountedScope): its own
  // accesses are not counted, the hardware's request is (count_instruction).
  int uncounted = 0;
  // Its part in a warp collective: what it deposits, the lane it reads (-1: poison,
  // 32 + lane: its own value), what it gets back.
  uint64_t value = 0;
  int source = -1;
  uint64_t result = 0;
  // A warp matrix function's gather: where every lane's deposit goes (null: nowhere),
  // and the function's name for messages.
  uint64_t* gathered = nullptr;
  const char* matrix_what = nullptr;
  // ThreadSanitizer: the lanes of its last __syncwarp and the slot each of them
  // released (per lane, two slots used in turn: a lane runs at most one __syncwarp
  // ahead of a lane that has not yet acquired).
  unsigned syncwarp_count = 0;
  unsigned synced_mask = 0, synced_slots = 0;
  // The watchdog: polls (volatile or atomic reads) since the thread last made progress
  // (a write, a poll of an address or value it had not seen lately, a barrier or a
  // collective), what it polled lately, and the poll it last repeated.
  uint64_t quiet = 0;
  struct Poll {
    const void* address = nullptr;
    uint64_t value = 0;
  };
  Poll recent[4];
  unsigned recent_next = 0;
  const void* spin_address = nullptr;
  const void* spin_pc = nullptr;
};

// Launches of at most this many threads interleave at every access in the
// interleaving pass, larger ones at one in the schedule's period.
constexpr uint64_t kFullStrengthThreads = 256;

// Polls without progress after which a thread counts as spinning.
constexpr uint64_t kSpinLimit = 20000;

// Lanes of one warp waiting at one collective: those named in `mask` at one call site
// (groups with disjoint masks at one site complete independently, as two half-warps
// each reducing with its own mask do on a GPU). __activemask is a collective without a
// mask (converge): the lanes that reach its site together, resolved by the scheduler
// when no lane of the warp can run any further.
struct Group {
  Collective kind = Collective::shuffle;
  Site site{nullptr, 0};
  unsigned mask = 0;
  unsigned arrived = 0;
};

struct Warp {
  unsigned exists = 0;  // lanes this block has in the warp
  unsigned live = 0;    // lanes that have not exited
  // Its pending groups (each lane waits in one at most): a fixed array, so that no
  // fiber allocates (ThreadSanitizer would see the scheduler free what a fiber made).
  Group groups[32];
  int pending = 0;
  Group* begin() { return groups; }
  Group* end() { return groups + pending; }
  const Group* begin() const { return groups; }
  const Group* end() const { return groups + pending; }
  Group* add(const Group& g) { return &(groups[pending++] = g); }
  void remove(const Group* g) { groups[g - groups] = groups[--pending]; }
};

struct SharedArray {
  const SharedDecl* decl;
  char* raw;
  char* data;
  std::size_t bytes;
};

struct Launch;

// The counters (counters.cpp): a warp-level request being gathered, the lanes of one
// warp that reached one access site for the same time; a site's counters by (pc,
// shared, store).
struct Request {
  unsigned arrived = 0;  // the lanes that reached it (active lanes)
  unsigned mask = 0;     // of them, those that give an address (all but ldmatrix's upper lanes)
  unsigned bytes = 0;
  bool shared = false, store = false;
  bool atomic = false;                     // a global atomic's (its lanes' operations)
  const char* instruction_site = nullptr;  // a tensor-core instruction's (SiteCounters)
  // The block's barrier generation when its first lane joined: a lane that joins after
  // a __syncthreads since then is in a later turn (close_turns), not in this request.
  unsigned barrier_generation = 0;
  uint64_t address[32] = {};
};
using SiteKey = std::tuple<const void*, bool, bool>;
// A vector access the CUDA source makes (load4, __ldg of a float4: check_aligned
// announces it), which the host compiler may split into narrower ones: counted once,
// as one access of its size, at the first of its parts.
struct VectorAccess {
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;  // 0: none pending
  const void* pc = nullptr;
  bool counted = false;
};
struct BlockCounters {
  // per warp: whether it is counted (all, or with Launch::only_sampled a sample of up to
  // kSampledWarps: the others run without reporting their plain accesses)
  std::vector<char> counted_warps;
  bool counts(const Thread& t) const { return counted_warps[std::size_t(t.warp)] != 0; }
  // per warp: (pc, visit) -> the request being gathered
  std::vector<std::map<std::pair<SiteKey, uint64_t>, Request>> pending;
  // per thread: how often it has reached each access site since its warp last
  // synchronised as a whole
  // (a site and kind: cp.async's read and write share their call's site)
  std::vector<std::map<SiteKey, uint64_t>> visits;
  // per thread: the block's barrier generation its visits count from (they start again
  // from 0 after a __syncthreads, and after a collective of its whole warp)
  std::vector<unsigned> visits_generation;
  std::vector<VectorAccess> vectors;  // per thread
  std::map<SiteKey, SiteCounters> sites;
  // per warp: the global sectors its requests touched, read and written (LaunchCounters::
  // Footprint)
  std::vector<std::unordered_set<uint64_t>> read_sectors, written_sectors;
  // per warp: the global sectors its atomics went to; and the block's atomic lanes, and
  // the sectors its atomic requests touched, summed over the requests
  std::vector<std::unordered_set<uint64_t>> atomic_sectors;
  uint64_t atomic_ops = 0, atomic_sector_ops = 0;
};

// ThreadSanitizer's sync objects of one block, at addresses no other block of the
// launch uses (a sync object keeps its history: shared by two blocks, it would order
// them and hide a race between them). On the heap, freed when the launch ends.
struct BlockSyncs {
  char start = 0;         // the scheduler set the block up -> its threads
  char barrier[2] = {};   // alternating per barrier generation
  char shared = 0;        // an array's allocation -> its use
  char lane[1024][2] = {};  // __syncwarp: per thread, its two slots in turn
  char fault = 0;           // a thread that records the block's fault -> the scheduler
};

struct Block {
  Launch* launch = nullptr;
  Dim3 idx;
  long linear = 0;
  std::vector<Thread> threads;
  std::vector<Warp> warps;
  int live = 0;
  unsigned barrier_generation = 0;
  BlockSyncs* syncs = nullptr;
  // A fixed array, not a vector: the fibers reach it from uninstrumented code only.
  static constexpr int kMaxSharedArrays = 32;
  SharedArray shared[kMaxSharedArrays];
  int shared_count = 0;
  std::size_t static_shared = 0;
  char* dynamic_raw = nullptr;
  char* dynamic = nullptr;
  bool faulted = false;
  Fault fault{kSuccess, ""};
  // A memory fault a thread took (an access to a guard page), recorded by the signal
  // handler and turned into the block's fault by the scheduler.
  bool memory_fault = false;
  const void* fault_address = nullptr;
  const void* fault_pc = nullptr;
  const Thread* fault_thread = nullptr;
  bool maybe_stuck = false;           // a thread has polled kSpinLimit times without progress
  bool interleave = false;            // yield at plain accesses too, one in `period`
  BlockCounters* counters = nullptr;  // counting on: every access yields and is counted
  unsigned period = 1;
  uint64_t rng = 0;  // which accesses yield (xorshift, seeded per launch and block)
  // racecheck across blocks, its ordering (the interleaving pass; access_checks.cpp):
  // how many __threadfence calls the block's threads made, how many atomic writes it
  // published since its last one, and, per other block, how many of that block's fences
  // it has acquired through atomics (what it is ordered after).
  uint32_t fences = 0;
  uint32_t published_since_fence = 0;
  std::unordered_map<int32_t, uint32_t> acquired;
};

struct Launch {
  const LaunchSpec* spec;
  const std::function<void()>* body;
  std::string name;  // the kernel's, and what it is part of (set_work): "k (op cuda/3 ...)"
  Schedule schedule;
  uint64_t number;
  std::size_t shared_limit;  // static + dynamic shared memory a block may use
  uint64_t threads = 0;      // in the grid
  std::atomic<bool> polled{false};  // a thread polled (a volatile or atomic read)
  bool strict_sync = false;  // a barrier with exited threads is a fault, not a note
  std::atomic<bool> faulted{false};
  std::mutex fault_mutex;
  long fault_block = -1;
  Fault fault{kSuccess, ""};
  char end_sync = 0;  // ThreadSanitizer: every thread -> the host, at the end of the launch
  // Under ThreadSanitizer, what the blocks' threads touched is freed when the launch
  // ends, after the host has synchronised with every thread: freed at a block's end, the
  // scheduler would have to synchronise with that block first, and would then carry its
  // history into the next block.
  std::mutex deferred_mutex;
  std::vector<char*> deferred_frees;
  std::vector<BlockSyncs*> deferred_syncs;
  // racecheck across blocks (the plain build's interleaving pass): which block wrote
  // each byte of global memory with a plain store in this launch, in 8-byte chunks, so
  // that a plain store by another block to the same byte is a race. Nothing orders two
  // blocks of one launch (a __syncthreads orders the threads of its own block only), so
  // this is per launch and no barrier clears it; only the launch's end does. Sharded by
  // address, as the blocks run in parallel.
  // Atomic writes are recorded too (atomic_chunks: the last block to update each byte
  // atomically), so that a plain write and another block's atomic update of one byte
  // race unless the blocks are ordered: each record keeps the writer's fence count at
  // the write, and `published` holds, per address of an atomic written after a fence,
  // the fence count each block had then, which a block acquires by its own atomic on
  // that address (Block::acquired; access_checks.cpp says what this models).
  struct WrittenChunk {
    int32_t block[8] = {-1, -1, -1, -1, -1, -1, -1, -1};  // the writing block's linear index, per byte
    const void* pc[8] = {};                               // and where it wrote it
    uint32_t fences[8] = {};                              // and its fence count then
  };
  // Plain writes are recorded by pages of kChunksPerPage chunks (4 KiB of device memory),
  // one lookup per page: a kernel writes its output contiguously, and a map entry
  // allocated per 8 bytes took an eighth of an emulated launch's time (attention's
  // backward ops, 2026-11-30). A page is sharded as one, so the shard of a chunk is
  // that of its page.
  static constexpr std::uintptr_t kChunksPerPage = 512;
  struct WrittenPage {
    WrittenChunk chunk[kChunksPerPage];
  };
  struct WrittenShard {
    std::mutex mutex;
    std::unordered_map<std::uintptr_t, std::unique_ptr<WrittenPage>> pages;  // plain writes, by page
    std::unordered_map<std::uintptr_t, WrittenChunk> atomic_chunks;          // atomic writes
    std::unordered_map<std::uintptr_t, std::unordered_map<int32_t, uint32_t>> published;
    // The plain record of a chunk, made (no block yet) if its page has none.
    WB_EMU_NO_TSAN WrittenChunk& plain(std::uintptr_t chunk) {
      std::unique_ptr<WrittenPage>& page = pages[chunk / kChunksPerPage];
      if (!page) page = std::make_unique<WrittenPage>();
      return page->chunk[chunk % kChunksPerPage];
    }
    // The plain record of a chunk, or null when nothing was written on its page.
    WB_EMU_NO_TSAN const WrittenChunk* find_plain(std::uintptr_t chunk) const {
      const auto it = pages.find(chunk / kChunksPerPage);
      return it == pages.end() ? nullptr : &it->second->chunk[chunk % kChunksPerPage];
    }
  };
  static constexpr int kWrittenShards = 16;
  WrittenShard written[kWrittenShards];
  std::mutex atomics_mutex;  // lock_atomics
  // Counting on: every block's sites, summed; the device buffers as the launch began
  // ([begin, end), sorted), so that what is not device or shared memory (the kernel's
  // parameters, a local copy) is not counted.
  bool counting = false;
  std::vector<long> counted_blocks;  // sorted; empty: every block (Context::sample_blocks)
  bool only_sampled = false;         // only the counted blocks run, and of them up to kSampledWarps count
  std::atomic<uint64_t> counted_warps{0};  // over the counted blocks
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> device_ranges;
  std::mutex counters_mutex;
  std::map<SiteKey, SiteCounters> sites;
  // The counted warps' sectors, all together, and summed warp by warp (Footprint).
  std::unordered_set<uint64_t> read_sectors, written_sectors;
  uint64_t read_warp_sectors = 0, written_warp_sectors = 0;
  uint64_t reading_warps = 0, writing_warps = 0;  // counted warps with any
  // ... and summed block by block, with the counted blocks that touched any
  uint64_t read_block_sectors = 0, written_block_sectors = 0;
  uint64_t reading_blocks = 0, writing_blocks = 0;
  std::unordered_set<uint64_t> atomic_sectors;  // likewise, of the atomics
  uint64_t atomic_warp_sectors = 0, atomic_warps = 0;
  uint64_t atomic_block_sectors = 0, atomic_blocks = 0;
  uint64_t atomic_ops = 0, atomic_sector_ops = 0;  // BlockCounters'
};

// A thread's outstanding cp.async copies, oldest first (a ring), and its count of
// commits. Per thread of the block that runs on the worker, reset for every block.
struct AsyncQueue {
  AsyncCopy copies[kMaxAsyncCopies];
  int head = 0, count = 0;
  uint64_t committed = 0;
  void reset() { head = count = 0, committed = 0; }
};

// One per OS thread that runs blocks.
struct Worker {
  fiber::StackPool stacks;
  fiber::context scheduler = nullptr;
  fiber::Sanitizer scheduler_san;
  const void* scheduler_stack = nullptr;  // ASan: the scheduler's stack
  std::size_t scheduler_stack_size = 0;
  Block* block = nullptr;
  Thread* current = nullptr;
  // The cp.async queues of the block's threads (by linear index), grown to the largest
  // block the worker has run and reset by the scheduler before each block: no fiber
  // allocates them, and only the emulator's uninstrumented code touches them.
  std::vector<AsyncQueue> async;
  // ThreadSanitizer: the fibers the blocks' threads run on. A block never gets a fiber
  // that a block of the same launch ran on (its history would order the two blocks:
  // make_block); fibers are reused from one launch to the next, where the launch's end
  // orders everything anyway. `used` holds this launch's, oldest first.
  std::vector<void*> tsan_sets[2];  // ThreadSanitizer fibers, one set per alternate block
  int tsan_set = 0;
};

// The worker that runs blocks on this OS thread; inline, so that every part of the
// emulator reads it without a call.
inline thread_local Worker* tls_worker = nullptr;

// The calling OS thread's worker, made on first use.
Worker& worker();

// Runs every block of a launch, one worker per OS thread, until the grid has ended
// (or a block faulted): the blocks in parallel, or in the schedule's order.
void run_grid(Launch& launch);

// The block's first fault wins; recorded by a thread inside its fiber (scheduler.cpp).
void record_fault(Block& b, Fault f);

// From a fiber back to its block's scheduler.
inline WB_EMU_NO_TSAN void yield(Worker& w, Thread& t) {
  // ThreadSanitizer: what the thread did so far comes before the launch's end, even if
  // it is never resumed (a faulted block's threads are abandoned where they wait).
  fiber::release(&w.block->launch->end_sync);
  fiber::before_switch(t.san, w.scheduler_san, w.scheduler_stack, w.scheduler_stack_size, false);
  const fiber::transfer tr = boost::context::detail::jump_fcontext(w.scheduler, nullptr);
  w.scheduler = tr.fctx;
  fiber::after_switch(t.san, &w.scheduler_stack, &w.scheduler_stack_size);
}

// A fault of the calling thread: "<check>: kernel k, block b, thread t: <what>".
[[noreturn]] void raise(int code, const std::string& check, const std::string& what);

// __activemask: with no thread of the block able to run, the lanes at each converge
// site are the lanes that reached it together. Returns whether any group resolved.
bool resolve_converge(Block& b);

// The generator behind every schedule's choices (splitmix64's finaliser).
inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// ---------------------------------------------------------------------------------
// Where things are, in words (scheduler.cpp)

// "kernel k, block (x,y,z)[, thread (x,y,z)]"
std::string where(const Block& b, const Thread* t);
std::string dim_text(const Dim3& d);
// Two calls are the same barrier or collective when they are the same line of source.
// (Not the same instruction: the optimiser may duplicate a call into several paths.)
inline bool same_site(const Site& a, const Site& b) {
  return a.line == b.line && (a.file == b.file || (a.file && b.file && std::strcmp(a.file, b.file) == 0));
}

// "variants/op/NN_name.cu:76": relative to the repository.
std::string site_text(const Site& s);
// "0x0000ffff"
std::string mask_text(unsigned m);
// "0,1,2"
std::string lanes_text(unsigned m);

// ---------------------------------------------------------------------------------
// Memory seen from a block (memory.cpp)

// Frees the block's shared memory, its canaries checked first (a write outside an
// array is the block's fault).
void release_shared(Block& b);
// What the address is to the kernel: a shared array of the block, its dynamic shared
// memory, or a device buffer.
std::string describe_address(const Block& b, const void* address);
// Canary bytes alternate 0xA5 (even addresses) and 0xFF (odd): every aligned float
// reads as a NaN (0xFFA5FFA5), so a read past a buffer spoils what it touches, and the
// pattern differs from the poison of fresh memory (0xFF), so a write of poison past a
// buffer shows too.
inline unsigned char canary_byte(const void* at) { return (reinterpret_cast<std::uintptr_t>(at) & 1) ? 0xFF : 0xA5; }
inline WB_EMU_NO_TSAN bool canary_intact(const char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<unsigned char>(p[i]) != canary_byte(p + i)) return false;
  return true;
}
// canary_read's lookup (memory.cpp), for bytes whose ends hold the pattern.
std::string canary_where(const Block& b, const void* address, std::size_t bytes);
// A read of `bytes` at `address` that lies in a canary (before or past a device
// buffer, a shared array of the block or its dynamic shared memory), in words ("4
// bytes past the end of shared array 's', declared at ..."), or "" when it does not.
// Only reads with two bytes of the pattern (0xA5 next to 0xFF) at either end are
// looked up: never the poison of unwritten memory (all 0xFF), rarely data. Inline, as
// every checked access of a kernel passes here.
inline WB_EMU_NO_TSAN std::string canary_read(const Block& b, const void* address, std::size_t bytes) {
  const char* first = static_cast<const char*>(address);
  const std::size_t probe = bytes < 2 ? bytes : 2;
  if (!canary_intact(first, probe) && !canary_intact(first + bytes - probe, probe)) return std::string();
  return canary_where(b, address, bytes);
}
// The access to a guard page that the fault handler caught, in words.
std::string memory_fault_message(const Block& b);
// Checks the canaries of every device buffer after a launch: "" when all are intact.
std::string device_canaries(const std::string& kernel);

// ---------------------------------------------------------------------------------
// The counters (counters.cpp)

// The blocks a sample of `sample` blocks of a grid counts (sorted; empty: every one),
// and whether the launch counts a block.
std::vector<long> sampled_blocks(uint64_t blocks, uint64_t sample);
bool counted(const Launch& launch, long block);
// Counting for a block that starts, one access of one of its threads, the block's end
// (its requests still gathering counted, its sites added to the launch's).
void begin_counting(Block& b);
void count_access(Block& b, const Thread& t, const void* address, std::size_t bytes, Access kind, const void* pc);
// A tensor-core instruction's request (emu::count_instruction), at its call's site; a
// warp collective's completed group, the lanes of `mask` (warp.cpp): it also ends the
// turn of the warp's requests that only some of those lanes had joined.
const char* instruction_site(const Site& at, const char* prefix = "");
void count_collective(Block& b, const Thread& t, const Site& at, unsigned mask);
void count_instruction(Block& b, const Thread& t, const char* site, const void* address, std::size_t bytes, bool shared,
                       bool store, bool gives);
void end_counting(Block& b);
// The calling thread is about to make a vector access of `bytes` at p (check_aligned).
void announce_vector(Block& b, const Thread& t, const void* p, std::size_t bytes, const void* pc);

// ---------------------------------------------------------------------------------
// The access checks (access_checks.cpp)

// A __threadfence of the running kernel thread (the instrumentation's fence,
// emu/tsan_hooks.cpp): what the block wrote so far is published to the blocks that
// later acquire one of its atomics (the race check across blocks).
void on_fence();
// Around an atomic that may write (emu/tsan_hooks.cpp: from before it takes effect to
// its report, on_access, which lets go): in the interleaving pass the atomics of a
// launch take effect and are checked across blocks one at a time, so that the record
// follows the order they took effect in (an OS thread preempted between an atomic and
// its report would otherwise record it after writes that came after it). Elsewhere
// nothing.
void lock_atomics();
void unlock_atomics();

// ---------------------------------------------------------------------------------
// Warp collectives (warp.cpp)

// A lane arrives at a collective and waits until its group completes; its result.
uint64_t collective(Site site, Collective kind, unsigned mask, uint64_t value, int source);

}  // namespace wb::emu::internal
