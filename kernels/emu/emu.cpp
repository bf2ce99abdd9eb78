// The SIMT emulator (kernels/emu/emu.h): the context (sticky errors, device memory,
// kernel attributes), the launch checks, and the block scheduler with its barriers,
// warp collectives, shared memory and faults.
#include "kernels/emu/emu.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <random>
#include <stdexcept>

#include "kernels/emu/fiber.h"

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

constexpr std::size_t kCanary = 256;  // bytes before and after every device buffer
constexpr std::size_t kSharedCanary = 64;
constexpr unsigned char kCanaryByte = 0xA5;
constexpr unsigned char kPoisonByte = 0xFF;

struct Allocation {
  char* raw;  // what was allocated
  std::size_t bytes;
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
};

Context& context() {
  static Context c;
  return c;
}

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
    if (static_cast<unsigned char>(p[i]) != kCanaryByte) return false;
  return true;
}

// Fills without calling memset, so that ThreadSanitizer's interceptors do not record
// the emulator's own writes as a fiber's.
WB_EMU_NO_TSAN void fill(void* p, unsigned char value, std::size_t n) {
  volatile unsigned char* q = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) q[i] = value;
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

struct Thread {
  Builtins builtins;
  int linear = 0, lane = 0, warp = 0;
  State state = State::ready;
  fiber::context ctx = nullptr;
  fiber::Stack stack;
  fiber::Sanitizer san;
  Site wait_site{nullptr, 0};  // the barrier or collective it waits at
  bool started = false;
};

enum class Collective { shuffle, vote, syncwarp };

struct Warp {
  unsigned exists = 0;  // lanes this block has in the warp
  unsigned live = 0;    // lanes that have not exited
  bool pending = false;
  Collective kind = Collective::shuffle;
  Site site{nullptr, 0};
  unsigned mask = 0, arrived = 0;
  uint64_t value[32] = {};
  int source[32] = {};  // lane to read from; -1: poison; 32 + lane: its own value
  uint64_t result[32] = {};
  unsigned generation = 0;
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
  char warp[32][2] = {};  // __syncwarp, per warp and generation
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
};

struct Launch {
  const LaunchSpec* spec;
  const std::function<void()>* body;
  std::string name;
  Schedule schedule;
  uint64_t number;
  std::size_t shared_limit;  // static + dynamic shared memory a block may use
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
};

thread_local Worker* tls_worker = nullptr;

Worker& worker() {
  static thread_local Worker w;
  tls_worker = &w;
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

WB_EMU_NO_TSAN void on_exit(Block& b, Thread& t) {
  t.state = State::done;
  --b.live;
  Warp& wp = b.warps[t.warp];
  const unsigned me = 1u << t.lane;
  wp.live &= ~me;
  if (wp.pending && (wp.mask & me) && !(wp.arrived & me) && !b.faulted) {
    b.faulted = true;
    b.fault = Fault{kLaunchFailure, "synccheck: " + where(b, &t) + ": lane " + std::to_string(t.lane) +
                                        " exits while lanes of its warp wait for it at the collective at " +
                                        site_text(wp.site) + " (its mask 0x" +
                                        [&] {
                                          char buf[16];
                                          std::snprintf(buf, sizeof buf, "%08x", wp.mask);
                                          return std::string(buf);
                                        }() +
                                        " names it)"};
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
  } catch (const Fault& f) {
    if (!b.faulted) {
      b.faulted = true;
      b.fault = f;
    }
  } catch (const std::exception& e) {
    if (!b.faulted) {
      b.faulted = true;
      b.fault = Fault{kLaunchFailure, "exception: " + where(b, t) + ": " + e.what()};
    }
  } catch (...) {
    if (!b.faulted) {
      b.faulted = true;
      b.fault = Fault{kLaunchFailure, "exception: " + where(b, t) + ": unknown"};
    }
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
  fiber::before_switch(w.scheduler_san, t.san, t.stack.base, t.stack.size, false);
  const fiber::transfer tr = boost::context::detail::jump_fcontext(t.ctx, &t);
  fiber::after_switch(w.scheduler_san, nullptr, nullptr);
  t.ctx = tr.fctx;
  w.current = nullptr;
  detail::current_builtins = nullptr;
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

// No thread is ready: release a barrier every live thread reached at the same call,
// or describe the deadlock.
WB_EMU_NO_TSAN bool resolve(Block& b, std::string* why) {
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
  const unsigned missing = wp.mask & ~wp.arrived;
  std::string elsewhere;
  for (int l = 0; l < 32; ++l) {
    if (!(missing & (1u << l))) continue;
    const Thread& m = b.threads[at_collective->warp * 32 + l];
    elsewhere = "lane " + std::to_string(l) + " waits at " +
                (m.state == State::barrier ? "__syncthreads " : "another collective ") + site_text(m.wait_site);
    break;
  }
  *why = "synccheck: " + where(b, at_collective) + ": warp " + std::to_string(at_collective->warp) + ": lanes " +
         lanes_text(wp.arrived) + " wait at the collective at " + site_text(wp.site) + " (mask " + mask_text(wp.mask) +
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
  fill(*raw, kCanaryByte, canary);
  fill(data, kPoisonByte, bytes);
  fill(data + bytes, kCanaryByte, canary);
  return data;
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

  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  if (launch.schedule.shuffled) {
    std::mt19937_64 rng(mix(launch.schedule.seed ^ mix(launch.number * 1000003ull + uint64_t(linear))));
    std::shuffle(order.begin(), order.end(), rng);
  }
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
    if (b.faulted || b.live == 0 || progress) continue;
    std::string why;
    if (!resolve(b, &why)) {
      b.faulted = true;
      b.fault = Fault{kLaunchFailure, why};
    }
  }
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
    const char* data = reinterpret_cast<const char*>(address);
    const bool before = !canary_intact(a.raw, kCanary);
    const bool after = !canary_intact(data + a.bytes, kCanary);
    if (before || after) {
      fill(a.raw, kCanaryByte, kCanary);
      fill(const_cast<char*>(data) + a.bytes, kCanaryByte, kCanary);
      return "memcheck: kernel " + kernel + " wrote " + (before ? "before the start" : "past the end") +
             " of a device buffer of " + std::to_string(a.bytes) + " bytes";
    }
  }
  return "";
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
  char* raw = nullptr;
  char* data = allocate_with_canaries(bytes, kCanary, 256, &raw);
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.allocations[reinterpret_cast<std::uintptr_t>(data)] = Allocation{raw, bytes};
  return data;
}

void device_free(void* p) noexcept {
  if (!p) return;
  Context& c = context();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == c.allocations.end()) return;
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
  const long blocks = long(g.x) * long(g.y) * long(g.z);
  if (parallel_blocks() && blocks > 1) {
#pragma omp parallel for schedule(dynamic, 1)
    for (long i = 0; i < blocks; ++i) {
      if (run.faulted) continue;
      run_block(worker(), run, i);
    }
  } else {
    for (long i = 0; i < blocks && !run.faulted; ++i) run_block(worker(), run, i);
  }
  fiber::acquire(&run.end_sync);
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

WB_EMU_NO_TSAN void syncthreads(Site site) {
  Worker& w = *tls_worker;
  Thread& t = *w.current;
  Block& b = *w.block;
  t.state = State::barrier;
  t.wait_site = site;
  const unsigned generation = b.barrier_generation;
  fiber::release(&b.syncs->barrier[generation & 1]);
  yield(w, t);
  fiber::acquire(&b.syncs->barrier[generation & 1]);
}

namespace {

WB_EMU_NO_TSAN uint64_t collective(Site site, Collective kind, unsigned mask, uint64_t value, int source) {
  Worker& w = *tls_worker;
  Thread& t = *w.current;
  Block& b = *w.block;
  Warp& wp = b.warps[t.warp];
  const unsigned me = 1u << t.lane;
  const char* what = kind == Collective::syncwarp ? "__syncwarp" : kind == Collective::vote ? "warp vote" : "shuffle";
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
  if (wp.pending) {
    if (!same_site(wp.site, site) || wp.mask != mask || wp.kind != kind)
      raise(kLaunchFailure, "synccheck",
            "lane " + std::to_string(t.lane) + " reaches the " + what + " at " + site_text(site) + " (mask " +
                mask_text(mask) + ") while lanes " + lanes_text(wp.arrived) + " wait at the collective at " +
                site_text(wp.site) + " (mask " + mask_text(wp.mask) + ")");
  } else {
    wp.pending = true;
    wp.kind = kind;
    wp.site = site;
    wp.mask = mask;
    wp.arrived = 0;
  }
  wp.value[t.lane] = value;
  wp.source[t.lane] = source;
  wp.arrived |= me;
  const unsigned generation = wp.generation;
  // Only __syncwarp orders memory among the lanes; a shuffle or a vote exchanges
  // registers and orders nothing (CUDA's memory model), so ThreadSanitizer sees no
  // edge for them.
  const bool orders_memory = kind == Collective::syncwarp;
  if (orders_memory) fiber::release(&b.syncs->warp[t.warp][generation & 1]);
  if (wp.arrived == mask) {
    unsigned votes = 0;
    for (int l = 0; l < 32; ++l)
      if ((mask & (1u << l)) && wp.value[l]) votes |= 1u << l;
    for (int l = 0; l < 32; ++l) {
      if (!(mask & (1u << l))) continue;
      uint64_t r = ~uint64_t(0);  // poison: the source lane takes no part
      if (kind == Collective::vote) {
        r = votes;
      } else if (kind == Collective::shuffle) {
        const int s = wp.source[l];
        if (s >= 32)
          r = wp.value[s - 32];
        else if (s >= 0 && (mask & (1u << s)))
          r = wp.value[s];
      } else {
        r = 0;
      }
      wp.result[l] = r;
      Thread& lane = b.threads[t.warp * 32 + l];
      if (&lane != &t) lane.state = State::ready;
    }
    wp.pending = false;
    ++wp.generation;
  } else {
    t.state = State::collective;
    t.wait_site = site;
    yield(w, t);
  }
  if (orders_memory) fiber::acquire(&b.syncs->warp[t.warp][generation & 1]);
  return wp.result[t.lane];
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

WB_EMU_NO_TSAN unsigned active_mask() {
  Worker& w = *tls_worker;
  return w.block->warps[w.current->warp].live;
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

}  // namespace wb::emu
