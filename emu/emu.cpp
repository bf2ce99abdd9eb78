// The SIMT emulator (emu/emu.h): the context (sticky errors, device memory,
// kernel attributes), the launch checks, and the block scheduler with its barriers,
// warp collectives, shared memory and faults.
#include "emu/emu.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <random>
#include <set>
#include <stdexcept>

#include "emu/fiber.h"
#include "emu/symbols.h"
#include "emu/tensor_core_state.h"

#if WB_EMU_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace wb::emu {
namespace {

// ---------------------------------------------------------------------------------
// Targets

Target make_target(const std::string& name) {
  Target t;
  t.name = name;
  if (name == "sm_90") {
    t.major = 9, t.minor = 0, t.multiprocessors = 132;
    t.max_shared_per_block_optin = 227 * 1024, t.shared_per_multiprocessor = 228 * 1024;
    t.max_threads_per_multiprocessor = 2048, t.max_blocks_per_multiprocessor = 32;
  } else if (name == "sm_80") {
    t.major = 8, t.minor = 0, t.multiprocessors = 108;
    t.max_shared_per_block_optin = 163 * 1024, t.shared_per_multiprocessor = 164 * 1024;
    t.max_threads_per_multiprocessor = 2048, t.max_blocks_per_multiprocessor = 32;
  } else if (name == "sm_86" || name == "sm_89") {
    t.major = 8, t.minor = name == "sm_86" ? 6 : 9, t.multiprocessors = name == "sm_86" ? 84 : 128;
    t.max_shared_per_block_optin = 99 * 1024, t.shared_per_multiprocessor = 100 * 1024;
    t.max_threads_per_multiprocessor = 1536, t.max_blocks_per_multiprocessor = name == "sm_86" ? 16 : 24;
  } else {
    std::string known;
    for (const auto& n : target_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown emulation target '" + name + "' (known: " + known + ")");
  }
  t.device_name = "emulated sm_" + std::to_string(t.major) + std::to_string(t.minor) + " (" +
                  std::to_string(t.multiprocessors) + " SMs)";
  return t;
}

Target& current_target() {
  static Target t = [] {
    const char* env = std::getenv("WB_EMU_TARGET");
    return make_target(env && *env ? env : "sm_90");
  }();
  return t;
}

// ---------------------------------------------------------------------------------
// The context

constexpr std::size_t kCanary = 256;  // bytes before and after every device buffer, at least
constexpr std::size_t kSharedCanary = 64;
constexpr unsigned char kPoisonByte = 0xFF;
// The plain build puts every device buffer between inaccessible guard regions, so that
// an access far past it faults (caught and reported as cudaErrorIllegalAddress): the
// buffer ends kCanary to 2 kCanary bytes before the guard after it.
constexpr bool kGuardPages = !WB_EMU_ASAN && !WB_EMU_TSAN;
constexpr std::size_t kGuardBytes = 64 * 1024;

// Canary bytes alternate 0xA5 (even addresses) and 0xFF (odd): every aligned float
// reads as a NaN (0xFFA5FFA5), so a read past a buffer spoils what it touches, and the
// pattern differs from the poison of fresh memory (0xFF), so a write of poison past a
// buffer shows too.
inline unsigned char canary_byte(const void* at) { return (reinterpret_cast<std::uintptr_t>(at) & 1) ? 0xFF : 0xA5; }

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
  std::set<const void*> polling_kernels;  // kernels seen polling (a volatile or atomic read)
  std::vector<std::string> notes;
  std::set<std::string> noted;  // kernel and site of each note: one note each
};

Context& context() {
  static Context c;
  return c;
}

// Catches a kernel's access to a guard page (below).
void install_fault_handler();

void set_sticky(int code, const std::string& message) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.sticky == kSuccess) {
    c.sticky = code;
    c.sticky_message = message;
  }
  c.last = code;
}

WB_EMU_NO_TSAN bool canary_intact(const char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<unsigned char>(p[i]) != canary_byte(p + i)) return false;
  return true;
}

// Fills without calling memset, so that ThreadSanitizer's interceptors do not record
// the emulator's own writes as a fiber's.
WB_EMU_NO_TSAN void fill(void* p, unsigned char value, std::size_t n) {
  volatile unsigned char* q = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) q[i] = value;
}

WB_EMU_NO_TSAN void fill_canary(void* p, std::size_t n) {
  volatile unsigned char* q = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) q[i] = canary_byte(static_cast<char*>(p) + i);
}

std::string dim_text(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

// Two calls are the same barrier or collective when they are the same line of source.
// (Not the same instruction: the optimiser may duplicate a call into several paths.)
bool same_site(const Site& a, const Site& b) {
  return a.line == b.line && (a.file == b.file || (a.file && b.file && std::strcmp(a.file, b.file) == 0));
}

// "variants/op/NN_name.cu:76": relative to the repository.
std::string site_text(const Site& s) {
  std::string file = s.file ? s.file : "?";
#ifdef WB_SOURCE_DIR
  const std::string root = std::string(WB_SOURCE_DIR) + "/";
  if (file.rfind(root, 0) == 0) file = file.substr(root.size());
#endif
  return file + ":" + std::to_string(s.line);
}

// The kernel's name: the launch text up to its first top-level comma.
std::string kernel_name(const char* text) {
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

// ---------------------------------------------------------------------------------
// Blocks, threads and the scheduler

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
  bool maybe_stuck = false;  // a thread has polled kSpinLimit times without progress
  bool interleave = false;   // yield at plain accesses too, one in `period`
  unsigned period = 1;
  uint64_t rng = 0;  // which accesses yield (xorshift, seeded per launch and block)
};

struct Launch {
  const LaunchSpec* spec;
  const std::function<void()>* body;
  std::string name;
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
  // ThreadSanitizer's fibers are costly to create (a thread state each): a pool, each
  // block taking them in a rotated order so that thread t of two blocks rarely shares
  // one (a shared fiber would order their accesses and hide a race between them).
  std::vector<void*> tsan_fibers;
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
};

thread_local Worker* tls_worker = nullptr;

Worker& worker() {
  static thread_local Worker w;
  tls_worker = &w;
  if (kGuardPages) {
    // The fault handler runs on a stack of its own, so that a fiber whose stack
    // overflowed into its guard page is reported too.
    static thread_local std::vector<char> signal_stack = [] {
      std::vector<char> bytes(64 * 1024);
      stack_t ss{};
      ss.ss_sp = bytes.data();
      ss.ss_size = bytes.size();
      ::sigaltstack(&ss, nullptr);
      return bytes;
    }();
    (void)signal_stack;
  }
  return w;
}

}  // namespace

namespace {

std::string where(const Block& b, const Thread* t) {
  std::string s = "kernel " + b.launch->name + ", block " + dim_text(b.idx);
  if (t) s += ", thread " + dim_text(t->builtins.thread_idx);
  return s;
}

[[noreturn]] WB_EMU_NO_TSAN void raise(int code, const std::string& check, const std::string& what) {
  Worker& w = *tls_worker;
  throw Fault{code, check + ": " + where(*w.block, w.current) + ": " + what};
}

// From a fiber back to its block's scheduler.
WB_EMU_NO_TSAN void yield(Worker& w, Thread& t) {
  fiber::before_switch(t.san, w.scheduler_san, w.scheduler_stack, w.scheduler_stack_size, false);
  const fiber::transfer tr = boost::context::detail::jump_fcontext(w.scheduler, nullptr);
  w.scheduler = tr.fctx;
  fiber::after_switch(t.san, &w.scheduler_stack, &w.scheduler_stack_size);
}

std::string mask_text(unsigned m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}

std::string lanes_text(unsigned m) {
  std::string s;
  for (int l = 0; l < 32; ++l)
    if (m & (1u << l)) s += (s.empty() ? "" : ",") + std::to_string(l);
  return s;
}

// The block's first fault wins. Recorded by a thread (inside its fiber), it is handed
// to the scheduler through a sync object, so that ThreadSanitizer sees the message
// passed on, not raced for.
WB_EMU_NO_TSAN void record_fault(Block& b, Fault f) {
  if (b.faulted) return;
  b.faulted = true;
  b.fault = std::move(f);
  fiber::release(&b.syncs->fault);
}

WB_EMU_NO_TSAN void on_exit(Block& b, Thread& t) {
  t.state = State::done;
  --b.live;
  Warp& wp = b.warps[t.warp];
  const unsigned me = 1u << t.lane;
  wp.live &= ~me;
  for (const Group& g : wp) {
    if (g.kind == Collective::converge || !(g.mask & me) || (g.arrived & me)) continue;
    record_fault(b, Fault{kLaunchFailure, "synccheck: " + where(b, &t) + ": lane " + std::to_string(t.lane) +
                                              " exits while lanes of its warp wait for it at the collective at " +
                                              site_text(g.site) + " (its mask " + mask_text(g.mask) +
                                              " names it; lanes " + lanes_text(g.arrived) + " wait)"});
    break;
  }
}

WB_EMU_NO_TSAN void thread_entry(fiber::transfer tr) {
  Thread* t = static_cast<Thread*>(tr.data);
  Worker& w = *tls_worker;
  w.scheduler = tr.fctx;
  fiber::after_switch(t->san, &w.scheduler_stack, &w.scheduler_stack_size);
  Block& b = *w.block;
  fiber::acquire(&b.syncs->start);
  try {
    (*b.launch->body)();
    const AsyncQueue& q = w.async[std::size_t(t->linear)];
    if (q.count > 0) {
      const AsyncCopy& first = q.copies[q.head];
      raise(kLaunchFailure, "cp.async",
            "the thread ends with " + std::to_string(q.count) + " asynchronous cop" + (q.count == 1 ? "y" : "ies") +
                " not waited for (the oldest issued at " + site_text(first.site) +
                "): a cp.async must be followed by a cp_async_wait that covers it before the thread exits");
    }
  } catch (const Fault& f) {
    record_fault(b, f);
  } catch (const std::exception& e) {
    record_fault(b, Fault{kLaunchFailure, "exception: " + where(b, t) + ": " + e.what()});
  } catch (...) {
    record_fault(b, Fault{kLaunchFailure, "exception: " + where(b, t) + ": unknown"});
  }
  on_exit(b, *t);
  fiber::release(&b.launch->end_sync);
  fiber::before_switch(t->san, w.scheduler_san, w.scheduler_stack, w.scheduler_stack_size, true);
  boost::context::detail::jump_fcontext(w.scheduler, nullptr);
  std::abort();  // a finished thread is never resumed
}

WB_EMU_NO_TSAN void resume(Worker& w, Thread& t) {
  w.current = &t;
  detail::current_builtins = &t.builtins;
  detail::interleaving = w.block->interleave;
  fiber::before_switch(w.scheduler_san, t.san, t.stack.base, t.stack.size, false);
  const fiber::transfer tr = boost::context::detail::jump_fcontext(t.ctx, &t);
  fiber::after_switch(w.scheduler_san, nullptr, nullptr);
  t.ctx = tr.fctx;
  w.current = nullptr;
  detail::current_builtins = nullptr;
  detail::interleaving = false;
}

// The group of w's pending collectives that lane waits in.
const Group* group_of(const Warp& w, int lane) {
  for (const Group& g : w)
    if (g.arrived & (1u << lane)) return &g;
  return nullptr;
}

// __activemask: with no thread of the block able to run, the lanes at each converge
// site are the lanes that reached it together. Returns whether any group resolved.
WB_EMU_NO_TSAN bool resolve_converge(Block& b) {
  bool resolved = false;
  for (std::size_t w = 0; w < b.warps.size(); ++w) {
    Warp& warp = b.warps[w];
    for (Group* g = warp.begin(); g != warp.end();) {
      if (g->kind != Collective::converge) {
        ++g;
        continue;
      }
      for (int l = 0; l < 32; ++l) {
        if (!(g->arrived & (1u << l))) continue;
        Thread& t = b.threads[w * 32 + std::size_t(l)];
        t.result = g->arrived;
        t.state = State::ready;
      }
      warp.remove(g);  // the last group moves into its place: look at g again
      resolved = true;
    }
  }
  return resolved;
}

// A barrier that every live thread reached while other threads of the block had
// exited: a GPU since Volta counts exited threads as arrived, but the CUDA guide
// allows __syncthreads in conditional code only when the condition is uniform across
// the block. A note by default, a synccheck fault when strict.
WB_EMU_NO_TSAN void barrier_with_exited_threads(Block& b, const Thread& waiting, std::string* fault) {
  const Thread* gone = nullptr;
  int exited = 0;
  for (const Thread& t : b.threads)
    if (t.state == State::done) {
      ++exited;
      if (!gone) gone = &t;
    }
  const std::string what = "__syncthreads at " + site_text(waiting.wait_site) + " in kernel " + b.launch->name +
                           " is reached while threads of the block have exited (block " + dim_text(b.idx) + ": " +
                           std::to_string(exited) + " of " + std::to_string(b.threads.size()) +
                           " exited, the first thread " + dim_text(gone->builtins.thread_idx) + ")";
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (b.launch->strict_sync) {
    *fault = "synccheck: " + what + "; the CUDA guide allows __syncthreads in conditional code only when the "
             "condition is uniform across the block (--strict-sync)";
    return;
  }
  if (c.noted.insert(b.launch->name + " " + site_text(waiting.wait_site)).second) c.notes.push_back("synccheck note: " + what);
}

// No thread is ready: resolve the converge groups, release a barrier every live thread
// reached at the same call, or describe the deadlock (false, with *why).
WB_EMU_NO_TSAN bool resolve(Block& b, std::string* why) {
  if (resolve_converge(b)) return true;
  const Thread* at_barrier = nullptr;
  const Thread* other_barrier = nullptr;
  const Thread* at_collective = nullptr;
  for (const Thread& t : b.threads) {
    if (t.state == State::barrier) {
      if (!at_barrier) at_barrier = &t;
      if (!same_site(t.wait_site, at_barrier->wait_site) && !other_barrier) other_barrier = &t;
    } else if (t.state == State::collective && !at_collective) {
      at_collective = &t;
    }
  }
  if (at_barrier && !other_barrier && !at_collective) {
    if (b.live < int(b.threads.size())) {
      barrier_with_exited_threads(b, *at_barrier, why);
      if (!why->empty()) return false;
    }
    for (Thread& t : b.threads)
      if (t.state == State::barrier) t.state = State::ready;
    ++b.barrier_generation;
    return true;
  }
  if (other_barrier) {
    *why = "synccheck: " + where(b, nullptr) + ": threads wait at different __syncthreads: thread " +
           dim_text(at_barrier->builtins.thread_idx) + " at " + site_text(at_barrier->wait_site) + ", thread " +
           dim_text(other_barrier->builtins.thread_idx) + " at " + site_text(other_barrier->wait_site);
    return false;
  }
  const Warp& wp = b.warps[at_collective->warp];
  const Group& g = *group_of(wp, at_collective->lane);
  const unsigned missing = g.mask & ~g.arrived;
  std::string elsewhere;
  for (int l = 0; l < 32; ++l) {
    if (!(missing & (1u << l))) continue;
    const Thread& m = b.threads[at_collective->warp * 32 + l];
    elsewhere = "lane " + std::to_string(l) + " waits at " +
                (m.state == State::barrier ? "__syncthreads " : "another collective ") + site_text(m.wait_site);
    break;
  }
  *why = "synccheck: " + where(b, at_collective) + ": warp " + std::to_string(at_collective->warp) + ": lanes " +
         lanes_text(g.arrived) + " wait at the collective at " + site_text(g.site) + " (mask " + mask_text(g.mask) +
         ") for lanes " + lanes_text(missing) + "; " + elsewhere;
  return false;
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

WB_EMU_NO_TSAN void free_after_block(Block& b, char* p) {
  if (!WB_EMU_TSAN) {
    std::free(p);
    return;
  }
  std::lock_guard<std::mutex> lock(b.launch->deferred_mutex);
  b.launch->deferred_frees.push_back(p);
}

WB_EMU_NO_TSAN void release_shared(Block& b) {
  for (int i = 0; i < b.shared_count; ++i) {
    SharedArray& s = b.shared[i];
    if (!b.faulted && !WB_EMU_ASAN &&
        (!canary_intact(s.raw, kSharedCanary) || !canary_intact(s.data + s.bytes, kSharedCanary))) {
      const bool before = !canary_intact(s.raw, kSharedCanary);
      b.faulted = true;
      b.fault = Fault{kIllegalAddress, "memcheck: " + where(b, nullptr) + ": a write " +
                                           (before ? "before the start" : "past the end") + " of shared array '" +
                                           s.decl->name + "' (" + std::to_string(s.bytes) + " bytes, declared at " +
                                           site_text(Site{s.decl->file, s.decl->line}) + ")"};
    }
    free_after_block(b, s.raw);
  }
  b.shared_count = 0;
  if (b.dynamic_raw) {
    const std::size_t bytes = b.launch->spec->dynamic_shared;
    if (!b.faulted && !WB_EMU_ASAN &&
        (!canary_intact(b.dynamic_raw, kSharedCanary) || !canary_intact(b.dynamic + bytes, kSharedCanary))) {
      b.faulted = true;
      b.fault = Fault{kIllegalAddress, "memcheck: " + where(b, nullptr) + ": a write outside the " +
                                           std::to_string(bytes) + " bytes of dynamic shared memory"};
    }
    free_after_block(b, b.dynamic_raw);
    b.dynamic_raw = b.dynamic = nullptr;
  }
}

char* allocate_with_canaries(std::size_t bytes, std::size_t canary, std::size_t align, char** raw) {
  if (WB_EMU_ASAN) canary = 0;  // exact size: ASan's redzones catch what canaries would
  void* p = nullptr;
  if (::posix_memalign(&p, std::max<std::size_t>(align, 16), bytes + 2 * canary + (bytes == 0 ? 1 : 0)) != 0)
    throw std::bad_alloc();
  *raw = static_cast<char*>(p);
  char* data = *raw + canary;
  fill_canary(*raw, canary);
  fill(data, kPoisonByte, bytes);
  fill_canary(data + bytes, canary);
  return data;
}

// Whether every thread that can run has spun for kSpinLimit accesses (and one has).
WB_EMU_NO_TSAN bool only_spinning(const Block& b) {
  bool spinning = false;
  for (const Thread& t : b.threads) {
    if (t.state != State::ready) continue;
    if (t.quiet < kSpinLimit) return false;
    spinning = true;
  }
  return spinning;
}

// What the address is to the kernel: a shared array of the block, its dynamic shared
// memory, or a device buffer.
WB_EMU_NO_TSAN std::string describe_address(const Block& b, const void* address) {
  const char* a = static_cast<const char*>(address);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%p", address);
  for (int i = 0; i < b.shared_count; ++i) {
    const SharedArray& s = b.shared[i];
    if (a >= s.data && a < s.data + s.bytes)
      return std::string(hex) + " (byte " + std::to_string(a - s.data) + " of shared array '" + s.decl->name +
             "', declared at " + site_text(Site{s.decl->file, s.decl->line}) + ")";
  }
  const std::size_t dynamic = b.launch->spec->dynamic_shared;
  if (b.dynamic && a >= b.dynamic && a < b.dynamic + dynamic)
    return std::string(hex) + " (byte " + std::to_string(a - b.dynamic) + " of dynamic shared memory)";
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.allocations.upper_bound(reinterpret_cast<std::uintptr_t>(address));
  if (it != c.allocations.begin()) {
    --it;
    const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(address) - it->first;
    if (offset < it->second.bytes)
      return std::string(hex) + " (byte " + std::to_string(offset) + " of a device buffer of " +
             std::to_string(it->second.bytes) + " bytes)";
  }
  return hex;
}

WB_EMU_NO_TSAN std::string watchdog_message(const Block& b) {
  std::string spins;
  int spinning = 0, at_barrier = 0, at_collective = 0, exited = 0;
  for (const Thread& t : b.threads) {
    if (t.state == State::barrier) ++at_barrier;
    if (t.state == State::collective) ++at_collective;
    if (t.state == State::done) ++exited;
    if (t.state != State::ready) continue;
    if (++spinning > 2) continue;
    spins += (spins.empty() ? "" : "; ") + std::string("thread ") + dim_text(t.builtins.thread_idx) +
             " spins reading " + describe_address(b, t.spin_address) + " in " + code_location(t.spin_pc);
  }
  if (spinning > 2) spins += "; and " + std::to_string(spinning - 2) + " more threads spin";
  std::string others;
  if (at_barrier) others += ", " + std::to_string(at_barrier) + " wait at __syncthreads";
  if (at_collective) others += ", " + std::to_string(at_collective) + " wait at warp collectives";
  if (exited) others += ", " + std::to_string(exited) + " have exited";
  return "watchdog: " + where(b, nullptr) + ": no thread can make progress (" + std::to_string(kSpinLimit) +
         " polls each of what it had read lately, and no write): " + spins + others +
         ". A flag that only another block sets is never set here: blocks run one after another, and a GPU does "
         "not promise that the blocks of a grid run concurrently";
}

// The access to a guard page that the fault handler caught, in words.
std::string memory_fault_message(const Block& b) {
  const auto address = reinterpret_cast<std::uintptr_t>(b.fault_address);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%p", b.fault_address);
  std::string what = std::string("an access at ") + hex;
  const Thread& t = *b.fault_thread;
  const auto stack = reinterpret_cast<std::uintptr_t>(t.stack.base);
  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
  if (address < stack && address + page >= stack) {
    what = "the thread's stack overflowed (" + std::to_string(t.stack.size / 1024) +
           " KiB; WB_EMU_STACK_KIB sets it)";
  } else {
    Context& c = context();
    std::lock_guard<std::mutex> lock(c.mutex);
    bool found = false;
    for (const auto& [data, a] : c.allocations) {
      const auto raw = reinterpret_cast<std::uintptr_t>(a.raw);
      if (!a.raw_bytes || address < raw || address >= raw + a.raw_bytes) continue;
      what += address < data ? ", " + std::to_string(data - address) + " bytes before the start"
                             : ", " + std::to_string(address - data - a.bytes) + " bytes past the end";
      what += " of a device buffer of " + std::to_string(a.bytes) + " bytes (in the guard region around it)";
      found = true;
      break;
    }
    if (!found) what += ", outside every device buffer";
  }
  return "memcheck: " + where(b, &t) + ": " + what + ", in " + code_location(b.fault_pc);
}

WB_EMU_NO_TSAN void run_block(Worker& w, Launch& launch, long linear) {
  const LaunchSpec& spec = *launch.spec;
  Block b;
  b.launch = &launch;
  b.linear = linear;
  b.idx.x = unsigned(linear % spec.grid.x);
  b.idx.y = unsigned((linear / spec.grid.x) % spec.grid.y);
  b.idx.z = unsigned(linear / (long(spec.grid.x) * spec.grid.y));
  const int n = int(spec.block.x * spec.block.y * spec.block.z);
  b.threads.resize(n);
  b.warps.resize((n + 31) / 32);
  b.live = n;
  w.block = &b;
  b.syncs = new BlockSyncs;
  b.dynamic = allocate_with_canaries(spec.dynamic_shared, kSharedCanary, 16, &b.dynamic_raw);
  for (int i = 0; i < n; ++i) {
    Thread& t = b.threads[i];
    t.linear = i;
    t.lane = i % 32;
    t.warp = i / 32;
    t.builtins.thread_idx = Dim3{unsigned(i % spec.block.x), unsigned((i / spec.block.x) % spec.block.y),
                                 unsigned(i / (spec.block.x * spec.block.y))};
    t.builtins.block_idx = b.idx;
    t.builtins.block_dim = spec.block;
    t.builtins.grid_dim = spec.grid;
    t.stack = WB_EMU_TSAN ? w.stacks.fresh(std::size_t(i)) : w.stacks.get(std::size_t(i));
    t.ctx = boost::context::detail::make_fcontext(t.stack.top(), t.stack.size, &thread_entry);
    if (WB_EMU_TSAN) {
      while (w.tsan_fibers.size() < std::size_t(n)) w.tsan_fibers.push_back(fiber::create_tsan_fiber());
      t.san.tsan_fiber = w.tsan_fibers[std::size_t((i + linear * 37 + launch.number * 11) % n)];
    }
    b.warps[t.warp].exists |= 1u << t.lane;
  }
  for (Warp& wp : b.warps) wp.live = wp.exists;
  if (w.async.size() < std::size_t(n)) w.async.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) w.async[std::size_t(i)].reset();

  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  const uint64_t block_seed = mix(launch.schedule.seed ^ mix(launch.number * 1000003ull + uint64_t(linear)));
  if (launch.schedule.shuffled) {
    std::mt19937_64 rng(block_seed);
    std::shuffle(order.begin(), order.end(), rng);
  }
  b.interleave = launch.schedule.interleave && reports_accesses();
  b.period = launch.threads <= kFullStrengthThreads ? 1 : std::max(1u, launch.schedule.period);
  b.rng = mix(block_seed + 1) | 1;
  w.scheduler_san.tsan_fiber = fiber::current_tsan_fiber();
  // The threads start after the block was set up (ThreadSanitizer: the scheduler wrote
  // what they read).
  fiber::release(&b.syncs->start);

  while (b.live > 0 && !b.faulted) {
    bool progress = false;
    for (int i : order) {
      Thread& t = b.threads[i];
      if (t.state != State::ready) continue;
      resume(w, t);
      progress = true;
      if (b.faulted) break;
    }
    if (b.faulted || b.live == 0) continue;
    if (progress) {
      // The watchdog: the threads that can run only spin (the others wait or have
      // exited). An __activemask among them resolves first; else no thread of the
      // block can ever make progress.
      if (b.maybe_stuck && only_spinning(b) && !resolve_converge(b)) {
        b.faulted = true;
        b.fault = Fault{kLaunchFailure, watchdog_message(b)};
      }
      continue;
    }
    std::string why;
    if (!resolve(b, &why)) {
      b.faulted = true;
      b.fault = Fault{kLaunchFailure, why};
    }
  }
  if (b.memory_fault) b.fault = Fault{kIllegalAddress, memory_fault_message(b)};
  fiber::acquire(&b.syncs->fault);  // a fault a thread recorded, with its message
  release_shared(b);
  if (WB_EMU_TSAN) {
    std::lock_guard<std::mutex> lock(launch.deferred_mutex);
    launch.deferred_syncs.push_back(b.syncs);
  } else {
    delete b.syncs;
  }
#if WB_EMU_ASAN
  if (b.faulted)  // abandoned fibers leave their frames' redzones poisoned on the stacks
    for (int i = 0; i < n; ++i) __asan_unpoison_memory_region(b.threads[i].stack.base, b.threads[i].stack.size);
#endif
  if (b.faulted) {
    std::lock_guard<std::mutex> lock(launch.fault_mutex);
    if (launch.fault_block < 0 || linear < launch.fault_block) {
      launch.fault_block = linear;
      launch.fault = b.fault;
    }
    launch.faulted = true;
  }
  w.block = nullptr;
}

// Checks the canaries of every device buffer after a launch.
std::string device_canaries(const std::string& kernel) {
  if (WB_EMU_ASAN) return "";
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [address, a] : c.allocations) {
    char* data = reinterpret_cast<char*>(address);
    const bool before = !canary_intact(a.front, std::size_t(data - a.front));
    const bool after = !canary_intact(data + a.bytes, std::size_t(a.back - (data + a.bytes)));
    if (before || after) {
      fill_canary(a.front, std::size_t(data - a.front));
      fill_canary(data + a.bytes, std::size_t(a.back - (data + a.bytes)));
      return "memcheck: kernel " + kernel + " wrote " + (before ? "before the start" : "past the end") +
             " of a device buffer of " + std::to_string(a.bytes) + " bytes";
    }
  }
  return "";
}

struct sigaction previous_segv;

// A fault of kernel code on a guard page (or its stack's): recorded for the block, and
// back to the block's scheduler, the thread abandoned as a fault abandons it on a GPU.
// Any other SIGSEGV gets the disposition it had before the emulator's.
void on_segv(int, siginfo_t* info, void* uc) {
  Worker* w = tls_worker;
  if (!w || !w->current || !w->block || w->block->memory_fault) {
    ::sigaction(SIGSEGV, &previous_segv, nullptr);
    return;  // the access faults again, as if the emulator had not been here
  }
  Block& b = *w->block;
  b.memory_fault = true;
  b.faulted = true;
  b.fault_address = info->si_addr;
  b.fault_pc = reinterpret_cast<const void*>(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP] + 1);
  b.fault_thread = w->current;
  boost::context::detail::jump_fcontext(w->scheduler, nullptr);
}

void install_fault_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = &on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSEGV, &sa, &previous_segv);
  });
}

}  // namespace

// ---------------------------------------------------------------------------------
// The public API

const Target& target() { return current_target(); }

void set_target(std::string_view name) { current_target() = make_target(std::string(name)); }

std::vector<std::string> target_names() { return {"sm_80", "sm_86", "sm_89", "sm_90"}; }

const char* error_name(int code) {
  switch (code) {
    case kSuccess:
      return "cudaSuccess";
    case kInvalidValue:
      return "cudaErrorInvalidValue";
    case kMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case kInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case kInvalidDeviceFunction:
      return "cudaErrorInvalidDeviceFunction";
    case kIllegalAddress:
      return "cudaErrorIllegalAddress";
    case kLaunchOutOfResources:
      return "cudaErrorLaunchOutOfResources";
    case kMisalignedAddress:
      return "cudaErrorMisalignedAddress";
    case kLaunchFailure:
      return "cudaErrorLaunchFailure";
    case kNotSupported:
      return "cudaErrorNotSupported";
  }
  return "cudaErrorUnknown";
}

std::string error_string(int code) {
  std::string words;
  switch (code) {
    case kSuccess:
      words = "no error";
      break;
    case kInvalidValue:
      words = "invalid argument";
      break;
    case kMemoryAllocation:
      words = "out of memory";
      break;
    case kInvalidConfiguration:
      words = "invalid configuration argument";
      break;
    case kInvalidDeviceFunction:
      words = "invalid device function";
      break;
    case kIllegalAddress:
      words = "an illegal memory access was encountered";
      break;
    case kLaunchOutOfResources:
      words = "too many resources requested for launch";
      break;
    case kLaunchFailure:
      words = "unspecified launch failure";
      break;
    case kNotSupported:
      words = "operation not supported";
      break;
    default:
      words = "unknown error";
  }
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
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.sticky = kSuccess;
  c.sticky_message.clear();
  c.last = kSuccess;
  c.last_message.clear();
}

void* device_malloc(std::size_t bytes) {
  Allocation a{nullptr, bytes};
  char* data = nullptr;
  if (kGuardPages) {
    // [guard][front canary, data (256-byte aligned, as cudaMalloc's), back canary][guard]
    install_fault_handler();
    const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
    const std::size_t region = (bytes + 3 * kCanary + page - 1) / page * page;
    a.raw_bytes = region + 2 * kGuardBytes;
    void* map = ::mmap(nullptr, a.raw_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) throw std::bad_alloc();
    a.raw = static_cast<char*>(map);
    char* start = a.raw + kGuardBytes;
    if (::mprotect(start, region, PROT_READ | PROT_WRITE) != 0) {
      ::munmap(map, a.raw_bytes);
      throw std::bad_alloc();
    }
    a.back = start + region;
    data = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(a.back - kCanary - bytes)) & ~std::uintptr_t(255));
    a.front = start;
    fill_canary(a.front, std::size_t(data - a.front));
    fill(data, kPoisonByte, bytes);
    fill_canary(data + bytes, std::size_t(a.back - (data + bytes)));
  } else {
    data = allocate_with_canaries(bytes, kCanary, 256, &a.raw);
    a.front = data - (WB_EMU_ASAN ? 0 : kCanary);
    a.back = data + bytes + (WB_EMU_ASAN ? 0 : kCanary);
  }
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.allocations[reinterpret_cast<std::uintptr_t>(data)] = a;
  return data;
}

void device_free(void* p) noexcept {
  if (!p) return;
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == c.allocations.end()) return;
  if (it->second.raw_bytes)
    ::munmap(it->second.raw, it->second.raw_bytes);
  else
    std::free(it->second.raw);
  c.allocations.erase(it);
}

bool in_device_memory(const void* p, std::size_t bytes) {
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  auto it = c.allocations.upper_bound(address);
  if (it == c.allocations.begin()) return false;
  --it;
  return address >= it->first && address + bytes <= it->first + it->second.bytes;
}

int device_memset(void* p, int value, std::size_t bytes) {
  if (planning()) return kSuccess;
  if (const int sticky = sticky_error()) return sticky;
  if (bytes == 0) return kSuccess;
  if (!in_device_memory(p, bytes)) {
    set_sticky(kIllegalAddress,
               "memcheck: cudaMemsetAsync of " + std::to_string(bytes) + " bytes outside every device buffer");
    return kIllegalAddress;
  }
  std::memset(p, value, bytes);
  return kSuccess;
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

int launch(const LaunchSpec& spec, const std::function<void()>& body) {
  if (tls_plan) {
    tls_plan->record(spec);
    return kSuccess;
  }
  Context& c = context();
  if (const int sticky = sticky_error()) return sticky;
  const Target& t = target();
  const std::string name = kernel_name(spec.text);
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
  std::size_t limit = t.static_shared_per_block;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.max_dynamic_shared.find(spec.kernel);
    if (it != c.max_dynamic_shared.end()) limit = std::max<std::size_t>(limit, std::size_t(it->second));
  }
  if (spec.dynamic_shared > limit)
    return refuse(kInvalidValue,
                  std::to_string(spec.dynamic_shared) + " bytes of dynamic shared memory, more than " +
                      std::to_string(limit) +
                      (limit == t.static_shared_per_block ? " (above 48 KiB a kernel opts in with cudaFuncSetAttribute)"
                                                          : " (its cudaFuncSetAttribute opt-in)"));

  Launch run;
  run.spec = &spec;
  run.body = &body;
  run.name = name;
  run.schedule = schedule();
  run.number = c.launches++;
  run.shared_limit = limit;
  run.threads = threads * uint64_t(g.x) * g.y * g.z;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    run.strict_sync = c.strict_sync;
  }
  const long blocks = long(g.x) * long(g.y) * long(g.z);
  bool parallel = run.schedule.blocks == Schedule::Blocks::parallel;
  if (run.schedule.blocks == Schedule::Blocks::serial_if_polling) {
    std::lock_guard<std::mutex> lock(c.mutex);
    parallel = c.polling_kernels.count(spec.kernel) == 0;
  }
  if (parallel && parallel_blocks() && blocks > 1) {
#pragma omp parallel for schedule(dynamic, 1)
    for (long i = 0; i < blocks; ++i) {
      if (run.faulted) continue;
      run_block(worker(), run, i);
    }
  } else {
    std::vector<long> order(static_cast<std::size_t>(blocks));
    for (long i = 0; i < blocks; ++i) order[std::size_t(i)] = i;
    if (run.schedule.blocks != Schedule::Blocks::forward && blocks > 2) {
      std::mt19937_64 rng(mix(run.schedule.seed ^ mix(run.number + 0x5bd1e995ull)));
      std::shuffle(order.begin() + 1, order.end(), rng);  // block 0 first: see Schedule
    }
    for (long i : order) {
      if (run.faulted) break;
      run_block(worker(), run, i);
    }
  }
  fiber::acquire(&run.end_sync);
  if (run.polled) {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.polling_kernels.insert(spec.kernel);
  }
  for (char* p : run.deferred_frees) std::free(p);
  for (BlockSyncs* p : run.deferred_syncs) delete p;
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

bool reports_accesses() { return WB_EMU_REPORTS_ACCESSES; }

WB_EMU_NO_TSAN void on_access(const void* address, std::size_t bytes, Access kind, const void* pc) {
  Worker* w = tls_worker;
  if (!w || !w->current) return;
  Thread& t = *w->current;
  const char* a = static_cast<const char*>(address);
  const char* stack = static_cast<const char*>(t.stack.base);
  if (a >= stack && a < stack + t.stack.size) return;  // its own local memory
  const char* builtins = reinterpret_cast<const char*>(&t.builtins);
  if (a >= builtins && a < builtins + sizeof t.builtins) return;  // threadIdx and friends: registers on a GPU
  Block& b = *w->block;
  switch (kind) {
    case Access::read:
    case Access::write:
    case Access::volatile_write:
    case Access::atomic_write:
      if (kind != Access::read) t.quiet = 0;  // a write: progress
      if (kind == Access::atomic_write || !b.interleave) return;
      b.rng ^= b.rng << 13;
      b.rng ^= b.rng >> 7;
      b.rng ^= b.rng << 17;
      if (b.period > 1 && b.rng % b.period != 0) return;
      break;
    case Access::volatile_read:
    case Access::atomic_read: {
      if (!b.launch->polled.load(std::memory_order_relaxed)) b.launch->polled = true;
      // A poll. Reading an (address, value) it read lately is no progress; after
      // kSpinLimit of them the thread counts as spinning (the watchdog looks then).
      uint64_t value = 0;
      std::memcpy(&value, address, std::min<std::size_t>(bytes, sizeof value));
      bool seen = false;
      for (const Thread::Poll& p : t.recent) seen |= p.address == address && p.value == value;
      if (seen) {
        if (++t.quiet == kSpinLimit) b.maybe_stuck = true;
        t.spin_address = address;
        t.spin_pc = pc;
      } else {
        t.recent[t.recent_next++ & 3] = Thread::Poll{address, value};
        t.quiet = 0;
      }
      break;
    }
  }
  yield(*w, t);
}

WB_EMU_NO_TSAN void syncthreads(Site site) {
  Worker& w = *tls_worker;
  Thread& t = *w.current;
  Block& b = *w.block;
  t.quiet = 0;
  t.state = State::barrier;
  t.wait_site = site;
  const unsigned generation = b.barrier_generation;
  fiber::release(&b.syncs->barrier[generation & 1]);
  yield(w, t);
  fiber::acquire(&b.syncs->barrier[generation & 1]);
}

namespace {

const char* collective_name(Collective kind) {
  switch (kind) {
    case Collective::shuffle:
      return "shuffle";
    case Collective::vote:
      return "warp vote";
    case Collective::syncwarp:
      return "__syncwarp";
    case Collective::match_any:
    case Collective::match_all:
      return "warp match";
    case Collective::converge:
      return "__activemask";
    case Collective::matrix:
    case Collective::matrix_exchange:
      return "warp matrix function";
  }
  return "collective";
}

// The results of a group whose lanes have all arrived; every lane is made ready (the
// one completing it too: it is suspended like the others until the scheduler resumes
// it).
WB_EMU_NO_TSAN void complete(Block& b, int warp, const Group& g, unsigned syncwarp_slots) {
  Thread* lanes = &b.threads[std::size_t(warp) * 32];
  const unsigned mask = g.mask;
  unsigned votes = 0;
  for (int l = 0; l < 32; ++l)
    if ((mask & (1u << l)) && lanes[l].value) votes |= 1u << l;
  bool all_equal = true;
  for (int l = 0; l < 32; ++l)
    if ((mask & (1u << l)) && lanes[l].value != lanes[__builtin_ctz(mask)].value) all_equal = false;
  for (int l = 0; l < 32; ++l) {
    if (!(mask & (1u << l))) continue;
    Thread& t = lanes[l];
    uint64_t r = ~uint64_t(0);  // poison: the source lane takes no part
    switch (g.kind) {
      case Collective::vote:
        r = votes;
        break;
      case Collective::shuffle: {
        const int src = t.source;
        if (src >= 32)
          r = lanes[src - 32].value;
        else if (src >= 0 && (mask & (1u << src)))
          r = lanes[src].value;
        break;
      }
      case Collective::match_any: {
        unsigned same = 0;
        for (int j = 0; j < 32; ++j)
          if ((mask & (1u << j)) && lanes[j].value == t.value) same |= 1u << j;
        r = same;
        break;
      }
      case Collective::match_all:
        r = all_equal ? (uint64_t(1) << 32) | mask : 0;
        break;
      case Collective::syncwarp:
      case Collective::matrix_exchange:
        r = 0;
        t.synced_mask = mask;
        t.synced_slots = syncwarp_slots;
        break;
      case Collective::matrix:
        r = 0;
        break;
      case Collective::converge:
        break;
    }
    if (t.gathered) {
      for (int j = 0; j < 32; ++j)
        if (mask & (1u << j)) t.gathered[j] = lanes[j].value;
      t.gathered = nullptr;
    }
    t.result = r;
    t.state = State::ready;
  }
}

// A lane arrives at a collective: it joins the group of lanes at this call site with
// this mask, or starts one; a lane that other lanes wait for at another collective, or
// a mask that overlaps another group's at this very call, is a synccheck fault.
WB_EMU_NO_TSAN uint64_t collective(Site site, Collective kind, unsigned mask, uint64_t value, int source) {
  Worker& w = *tls_worker;
  Thread& t = *w.current;
  Block& b = *w.block;
  Warp& wp = b.warps[t.warp];
  const unsigned me = 1u << t.lane;
  const bool matrix = kind == Collective::matrix || kind == Collective::matrix_exchange;
  const char* what = matrix && t.matrix_what ? t.matrix_what : collective_name(kind);
  const bool converge = kind == Collective::converge;
  if (!converge) {
    if (!(mask & me))
      raise(kLaunchFailure, "synccheck",
            std::string(what) + " at " + site_text(site) + ": its mask " + mask_text(mask) +
                " does not name the calling lane " + std::to_string(t.lane));
    if (mask & ~wp.exists)
      raise(kLaunchFailure, "synccheck",
            std::string(what) + " at " + site_text(site) + ": its mask " + mask_text(mask) + " names lanes " +
                lanes_text(mask & ~wp.exists) + ", which this block (" + std::to_string(b.threads.size()) +
                " threads) does not have");
    if (mask & ~wp.live)
      raise(kLaunchFailure, "synccheck",
            std::string(what) + " at " + site_text(site) + ": its mask " + mask_text(mask) + " names lanes " +
                lanes_text(mask & ~wp.live) + ", which have exited");
  }
  Group* group = nullptr;
  for (Group& g : wp) {
    const bool here = same_site(g.site, site) && g.kind == kind;
    if (here && (converge || g.mask == mask)) {
      group = &g;
      break;
    }
    if (g.kind != Collective::converge && (g.mask & me))
      raise(kLaunchFailure, "synccheck",
            "lane " + std::to_string(t.lane) + " reaches the " + what + " at " + site_text(site) +
                (converge ? "" : " (mask " + mask_text(mask) + ")") + " while lanes " + lanes_text(g.arrived) +
                " wait for it at the " + collective_name(g.kind) + " at " + site_text(g.site) + " (mask " +
                mask_text(g.mask) + ")");
    if (here && (g.mask & mask))
      raise(kLaunchFailure, "synccheck",
            std::string(what) + " at " + site_text(site) + ": lane " + std::to_string(t.lane) + " arrives with mask " +
                mask_text(mask) + ", lanes " + lanes_text(g.arrived) + " with mask " + mask_text(g.mask) +
                ": the lanes of one collective must name the same lanes");
  }
  if (!group) {
    group = wp.add(Group{kind, site, converge ? 0u : mask, 0});
  }
  t.value = value;
  t.source = source;
  t.quiet = 0;
  group->arrived |= me;
  // Only __syncwarp orders memory among the lanes; a shuffle or a vote exchanges
  // registers and orders nothing (CUDA's memory model), so ThreadSanitizer sees no
  // edge for them.
  const bool orders_memory = kind == Collective::syncwarp || kind == Collective::matrix_exchange;
  if (orders_memory) {
    const unsigned slot = t.syncwarp_count++ & 1;
    fiber::release(&b.syncs->lane[t.linear][slot]);
    t.synced_slots = (t.synced_slots & ~me) | (slot << t.lane);
  }
  t.state = State::collective;
  t.wait_site = site;
  if (!converge && group->arrived == mask) {
    // The slot each lane released at is kept in its own synced_slots bit (set above,
    // as it arrived); gather them for the lanes' acquires.
    unsigned slots = 0;
    for (int l = 0; l < 32; ++l)
      if (mask & (1u << l)) slots |= b.threads[std::size_t(t.warp) * 32 + l].synced_slots & (1u << l);
    complete(b, t.warp, *group, slots);
    wp.remove(group);
  }
  yield(w, t);
  if (orders_memory)
    for (int l = 0; l < 32; ++l)
      if (t.synced_mask & (1u << l))
        fiber::acquire(&b.syncs->lane[std::size_t(t.warp) * 32 + l][(t.synced_slots >> l) & 1]);
  return t.result;
}

}  // namespace

WB_EMU_NO_TSAN uint64_t shuffle(Site site, unsigned mask, uint64_t value, Exchange kind, int arg, int width) {
  Worker& w = *tls_worker;
  const int lane = w.current->lane;
  if (width <= 0 || width > 32 || (width & (width - 1)))
    raise(kLaunchFailure, "synccheck",
          "shuffle at " + site_text(site) + ": width " + std::to_string(width) + " is not a power of two up to 32");
  const int segment = lane & ~(width - 1);
  int source = -1;
  switch (kind) {
    case Exchange::index:
      source = segment + (((arg % width) + width) % width);
      break;
    case Exchange::bxor: {
      const int s = lane ^ arg;  // a lane of a later segment gives the caller its own value
      source = s >= 0 && s < segment + width ? s : 32 + lane;
      break;
    }
    case Exchange::up:
      source = lane - arg >= segment ? lane - arg : 32 + lane;
      break;
    case Exchange::down:
      source = lane + arg < segment + width ? lane + arg : 32 + lane;
      break;
  }
  return collective(site, Collective::shuffle, mask, value, source);
}

WB_EMU_NO_TSAN unsigned ballot(Site site, unsigned mask, bool predicate) {
  return unsigned(collective(site, Collective::vote, mask, predicate ? 1 : 0, -1));
}

WB_EMU_NO_TSAN void syncwarp(Site site, unsigned mask) { collective(site, Collective::syncwarp, mask, 0, -1); }

WB_EMU_NO_TSAN void warp_matrix(Site site, const char* what, uint64_t value, uint64_t* values, bool orders_memory) {
  Thread& t = *tls_worker->current;
  t.gathered = values;
  t.matrix_what = what;
  collective(site, orders_memory ? Collective::matrix_exchange : Collective::matrix, 0xffffffffu, value, -1);
}

[[noreturn]] void warp_matrix_fault(Site site, int code, const std::string& what) {
  raise(code, "memcheck", what + " at " + site_text(site));
}

namespace {

// The tables of fragment_layout, per OS thread: never freed before the thread ends, so
// that a pointer handed out stays valid for every launch.
struct LayoutKey {
  uint32_t kind;
  int rows, cols;
  uint64_t seed;
  bool operator<(const LayoutKey& o) const {
    if (kind != o.kind) return kind < o.kind;
    if (rows != o.rows) return rows < o.rows;
    if (cols != o.cols) return cols < o.cols;
    return seed < o.seed;
  }
};

WB_EMU_NO_TSAN const uint16_t* make_layout(uint32_t kind, int rows, int cols, uint64_t seed) {
  static thread_local std::map<LayoutKey, std::vector<uint16_t>> tables;
  const LayoutKey key{kind, rows, cols, seed};
  auto it = tables.find(key);
  if (it != tables.end()) return it->second.data();
  const int n = rows * cols;
  if (n <= 0 || n % 32 != 0 || n > 65536) throw std::invalid_argument("fragment_layout: a fragment of " +
                                                                     std::to_string(n) + " elements");
  std::vector<uint16_t> table(2 * std::size_t(n));
  for (int s = 0; s < n; ++s) table[s] = uint16_t(s);
  // Fisher-Yates with a generator of this file's own (mix), so that a seed picks the same
  // mapping with every standard library.
  uint64_t state = mix(seed ^ mix(0x6d6d61ull + kind));
  for (int s = n - 1; s > 0; --s) {
    state = mix(state);
    const int j = int(state % uint64_t(s + 1));
    std::swap(table[s], table[j]);
  }
  for (int s = 0; s < n; ++s) table[n + table[s]] = uint16_t(s);
  return tables.emplace(key, std::move(table)).first->second.data();
}

}  // namespace

WB_EMU_NO_TSAN const uint16_t* fragment_layout(uint32_t kind, int rows, int cols, uint64_t seed) {
  return make_layout(kind, rows, cols, seed);
}

WB_EMU_NO_TSAN const uint16_t* fragment_layout(uint32_t kind, int rows, int cols) {
  const Worker* w = tls_worker;
  const uint64_t seed = w && w->block ? w->block->launch->schedule.seed : schedule().seed;
  return make_layout(kind, rows, cols, seed);
}

WB_EMU_NO_TSAN unsigned active_mask(Site site) { return unsigned(collective(site, Collective::converge, 0, 0, -1)); }

WB_EMU_NO_TSAN unsigned match_any(Site site, unsigned mask, uint64_t value) {
  return unsigned(collective(site, Collective::match_any, mask, value, -1));
}

WB_EMU_NO_TSAN unsigned match_all(Site site, unsigned mask, uint64_t value, int* predicate) {
  const uint64_t r = collective(site, Collective::match_all, mask, value, -1);
  *predicate = int(r >> 32);
  return unsigned(r);
}

[[noreturn]] void trap(Site site, const char* what) {
  raise(kLaunchFailure, "trap", std::string(what) + " at " + site_text(site));
}

void check_aligned(const void* p, std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if (address % bytes == 0) return;
  char text[32];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(address));
  raise(kMisalignedAddress, "memcheck",
        "a " + std::to_string(bytes) + "-byte access at " + text + ", which is not " + std::to_string(bytes) +
            "-byte aligned");
}

WB_EMU_NO_TSAN void* shared_array(const SharedDecl& decl, std::size_t bytes, std::size_t align) {
  Worker& w = *tls_worker;
  Block& b = *w.block;
  for (int i = 0; i < b.shared_count; ++i) {
    if (b.shared[i].decl == &decl) {
      fiber::acquire(&b.syncs->shared);
      return b.shared[i].data;
    }
  }
  if (b.shared_count == Block::kMaxSharedArrays)
    raise(kLaunchFailure, "launch", "more than " + std::to_string(Block::kMaxSharedArrays) + " shared arrays");
  b.static_shared += bytes;
  const Target& t = target();
  if (b.static_shared > t.static_shared_per_block)
    raise(kLaunchFailure, "launch",
          "static shared memory reaches " + std::to_string(b.static_shared) + " bytes with '" + decl.name +
              "', more than the 48 KiB a kernel may declare statically (the compiler would refuse it)");
  if (b.static_shared + b.launch->spec->dynamic_shared > b.launch->shared_limit && b.launch->spec->dynamic_shared > 0)
    raise(kLaunchFailure, "launch",
          "static (" + std::to_string(b.static_shared) + ") plus dynamic (" +
              std::to_string(b.launch->spec->dynamic_shared) + ") shared memory exceed the block's " +
              std::to_string(b.launch->shared_limit) + " bytes");
  SharedArray s{&decl, nullptr, nullptr, bytes};
  s.data = allocate_with_canaries(bytes, kSharedCanary, std::max<std::size_t>(align, 16), &s.raw);
  b.shared[b.shared_count++] = s;
  fiber::release(&b.syncs->shared);
  return s.data;
}

void* dynamic_shared() { return tls_worker->block->dynamic; }

// ---------------------------------------------------------------------------------
// The tensor-core instructions' side (emu/tensor_core_state.h)

[[noreturn]] void fault_at(Site site, int code, const char* check, const std::string& what) {
  raise(code, check, what + " at " + site_text(site));
}

WB_EMU_NO_TSAN bool in_shared_memory(const void* p, std::size_t bytes) {
  const Block& b = *tls_worker->block;
  const char* a = static_cast<const char*>(p);
  auto inside = [&](const char* start, std::size_t size) {
    return a >= start && a <= start + size && bytes <= std::size_t(start + size - a);
  };
  for (int i = 0; i < b.shared_count; ++i)
    if (inside(b.shared[i].data, b.shared[i].bytes)) return true;
  return b.dynamic && inside(b.dynamic, b.launch->spec->dynamic_shared);
}

WB_EMU_NO_TSAN std::string describe_address(const void* p) { return describe_address(*tls_worker->block, p); }

WB_EMU_NO_TSAN void async_copy_issue(Site site, void* dst, const unsigned char* data, std::size_t bytes) {
  Worker& w = *tls_worker;
  AsyncQueue& q = w.async[std::size_t(w.current->linear)];
  if (q.count == kMaxAsyncCopies)
    raise(kLaunchFailure, "cp.async",
          "a cp.async at " + site_text(site) + " while " + std::to_string(kMaxAsyncCopies) +
              " copies of this thread are outstanding: more than the emulator models (wait for earlier groups first)");
  AsyncCopy& c = q.copies[(q.head + q.count++) % kMaxAsyncCopies];
  c.dst = dst;
  c.site = site;
  c.bytes = uint32_t(bytes);
  c.group = q.committed;
  std::memcpy(c.data, data, bytes);
}

WB_EMU_NO_TSAN void async_copy_commit() {
  Worker& w = *tls_worker;
  ++w.async[std::size_t(w.current->linear)].committed;
}

WB_EMU_NO_TSAN bool async_copy_take(int pending, AsyncCopy* out) {
  Worker& w = *tls_worker;
  AsyncQueue& q = w.async[std::size_t(w.current->linear)];
  if (q.count == 0) return false;
  const AsyncCopy& c = q.copies[q.head];
  // Groups are numbered in commit order and the queue is in issue order, so the copies
  // to land are a prefix: those of the groups older than the `pending` newest
  // committed ones.
  if (pending >= 0 && c.group + uint64_t(pending) >= q.committed) return false;
  *out = c;
  q.head = (q.head + 1) % kMaxAsyncCopies;
  --q.count;
  return true;
}

}  // namespace wb::emu
