// The block scheduler: every thread of a block on a fiber of its own (emu/fiber.h),
// all on the OS thread that runs the block, resumed in the schedule's order until it
// waits at a barrier or a warp collective, exits, faults, or yields at a memory access
// the compiler's instrumentation reports (on_access); a barrier released when every
// live thread reached the same one; a deadlock or a divergent barrier reported as
// synccheck; the watchdog that stops a block whose threads only spin; and the grid's
// blocks run on the workers, one per OS thread.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>

#include "emu/internal.h"
#include "emu/symbols.h"

#if WB_EMU_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace wb::emu::internal {

// ---------------------------------------------------------------------------------
// Where things are, in words

std::string where(const Block& b, const Thread* t) {
  std::string s = "kernel " + b.launch->name + ", block " + dim_text(b.idx);
  if (t) s += ", thread " + dim_text(t->builtins.thread_idx);
  return s;
}

std::string dim_text(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
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


[[noreturn]] WB_EMU_NO_TSAN void raise(int code, const std::string& check, const std::string& what) {
  Worker& w = *tls_worker;
  throw Fault{code, check + ": " + where(*w.block, w.current) + ": " + what};
}

// ---------------------------------------------------------------------------------
// Threads

// The block's first fault wins. Recorded by a thread (inside its fiber), it is handed
// to the scheduler through a sync object, so that ThreadSanitizer sees the message
// passed on, not raced for.
WB_EMU_NO_TSAN void record_fault(Block& b, Fault f) {
  if (b.faulted) return;
  b.faulted = true;
  b.fault = std::move(f);
  fiber::release(&b.syncs->fault);
}

namespace {

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
  t.yielded_at_access = false;
  detail::current_builtins = &t.builtins;
  detail::report_plain_accesses = w.block->interleave || (w.block->counters && w.block->counters->counts(t));
  fiber::before_switch(w.scheduler_san, t.san, t.stack.base, t.stack.size, false);
  const fiber::transfer tr = boost::context::detail::jump_fcontext(t.ctx, &t);
  fiber::after_switch(w.scheduler_san, nullptr, nullptr);
  t.ctx = tr.fctx;
  w.current = nullptr;
  detail::current_builtins = nullptr;
  detail::report_plain_accesses = false;
}

}  // namespace

// ---------------------------------------------------------------------------------
// Barriers and deadlocks

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


namespace {

// The group of w's pending collectives that lane waits in.
const Group* group_of(const Warp& w, int lane) {
  for (const Group& g : w)
    if (g.arrived & (1u << lane)) return &g;
  return nullptr;
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
    const Group* other = m.state == State::collective ? group_of(wp, l) : nullptr;
    elsewhere = "lane " + std::to_string(l) + " waits at " +
                (m.state == State::barrier ? "__syncthreads " : "another collective ") + site_text(m.wait_site) +
                (other ? " (mask " + mask_text(other->mask) + ", with lanes " + lanes_text(other->arrived) + ")" : "");
    break;
  }
  *why = "synccheck: " + where(b, at_collective) + ": warp " + std::to_string(at_collective->warp) + ": lanes " +
         lanes_text(g.arrived) + " wait at the collective at " + site_text(g.site) + " (mask " + mask_text(g.mask) +
         ") for lanes " + lanes_text(missing) + "; " + elsewhere;
  return false;
}

// ---------------------------------------------------------------------------------
// The watchdog

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

// ---------------------------------------------------------------------------------
// Blocks

// ThreadSanitizer: the fibers of a block's threads. A TSan fiber keeps its history (its
// vector clock): a fiber that ran a thread of an earlier block orders the next thread it
// runs after everything that thread did; and since a __syncthreads joins the clocks of
// all the block's fibers, one such fiber orders the whole block, after its first
// barrier, after that earlier block, hiding a race between the two behind a barrier
// (the worker's single pool once did that for every block it ran). A barrier must order
// its own block only. So a worker keeps two sets of fibers and its blocks alternate
// between them: a block never shares a fiber with the block the worker ran just before
// it, and blocks on other workers never share one. A race between two blocks two apart
// on one worker may still be hidden; fresh fibers for every block would close that too,
// but thousands of live fibers make every barrier's clock join slower (the pass took
// about 5x as long), and a destroyed fiber's slot passes its history to the next
// fiber created.
WB_EMU_NO_TSAN void* tsan_fiber_for_thread(Worker& w, int set, int thread) {
  std::vector<void*>& fibers = w.tsan_sets[set];
  while (fibers.size() <= std::size_t(thread)) fibers.push_back(fiber::create_tsan_fiber());
  return fibers[std::size_t(thread)];
}

// A block's threads, each at the entry of a fiber of its own, its warps, its dynamic
// shared memory and the worker's cp.async queues for it. The worker runs it from now.
WB_EMU_NO_TSAN void make_block(Worker& w, Launch& launch, long linear, Block& b) {
  const LaunchSpec& spec = *launch.spec;
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
  if (WB_EMU_TSAN) w.tsan_set ^= 1;  // the other set than the worker's previous block
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
    if (WB_EMU_TSAN) t.san.tsan_fiber = tsan_fiber_for_thread(w, w.tsan_set, i);
    b.warps[t.warp].exists |= 1u << t.lane;
  }
  for (Warp& wp : b.warps) wp.live = wp.exists;
  if (w.async.size() < std::size_t(n)) w.async.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) w.async[std::size_t(i)].reset();
}

// The seed of a block's draws: the schedule's, the launch's number and the block's.
uint64_t block_seed(const Launch& launch, const Block& b) {
  return mix(launch.schedule.seed ^ mix(launch.number * 1000003ull + uint64_t(b.linear)));
}

// The order the scheduler resumes the block's threads in, and which of their accesses
// yield, drawn from the launch's schedule: the same seed, the same run.

WB_EMU_NO_TSAN std::vector<int> draw_schedule(const Launch& launch, Block& b) {
  const int n = int(b.threads.size());
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  const uint64_t seed = block_seed(launch, b);
  if (launch.schedule.shuffled) {
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
  }
  b.interleave = launch.schedule.interleave && reports_accesses();
  b.period = launch.threads <= kFullStrengthThreads ? 1 : std::max(1u, launch.schedule.period);
  b.rng = mix(seed + 1) | 1;
  return order;
}

// Resumes the ready threads of `order` once each. Whether any ran.
WB_EMU_NO_TSAN bool run_round(Worker& w, Block& b, const std::vector<int>& order) {
  bool progress = false;
  for (int i : order) {
    Thread& t = b.threads[i];
    if (t.state != State::ready) continue;
    resume(w, t);
    progress = true;
    if (b.faulted) break;
  }
  return progress;
}

// The order of the block's warps in the barrier interval that starts now (the
// warps_alone schedule): forward, reversed or shuffled, drawn from the block's seed and
// the barrier's generation.
WB_EMU_NO_TSAN std::vector<int> warp_order(const Block& b, uint64_t seed) {
  std::vector<int> order(b.warps.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
  const uint64_t draw = mix(seed ^ mix(b.barrier_generation + 0x2545f491ull));
  if (draw % 3 == 1) std::reverse(order.begin(), order.end());
  if (draw % 3 == 2) {
    std::mt19937_64 rng(draw);
    std::shuffle(order.begin(), order.end(), rng);
  }
  return order;
}

// One warp alone: its lanes (`lanes`: their linear indices, in the block's order)
// round after round until none of them can run, or one came back at a poll (it may
// wait for another warp, which runs next). Whether any ran.
WB_EMU_NO_TSAN bool run_warp_alone(Worker& w, Block& b, const std::vector<int>& lanes) {
  bool progress = false;
  for (bool again = true; again;) {
    again = false;
    for (int i : lanes) {
      Thread& t = b.threads[i];
      if (t.state != State::ready) continue;
      resume(w, t);
      progress = true;
      if (b.faulted || t.yielded_at_access) return true;
      again = true;
    }
  }
  return progress;
}

// Each warp alone, in the barrier interval's warp order. Whether any thread ran.
WB_EMU_NO_TSAN bool run_warps_alone(Worker& w, Block& b, const std::vector<std::vector<int>>& warps, uint64_t seed) {
  bool progress = false;
  for (int warp : warp_order(b, seed)) {
    progress |= run_warp_alone(w, b, warps[std::size_t(warp)]);
    if (b.faulted) break;
  }
  return progress;
}

// Resumes the ready threads in `order`, round after round (or warp by warp), until
// every thread has exited or the block faulted: when none is ready, the barriers and
// __activemask groups resolve, or the block is deadlocked; when the threads that run
// only spin, the watchdog stops the block.
WB_EMU_NO_TSAN void schedule_block(Worker& w, Block& b, const std::vector<int>& order, uint64_t seed) {
  const bool warps_alone = b.launch->schedule.warps_alone && b.warps.size() > 1;
  std::vector<std::vector<int>> warps(warps_alone ? b.warps.size() : 0);  // each warp's threads, in order
  if (warps_alone)
    for (int i : order) warps[std::size_t(b.threads[i].warp)].push_back(i);
  while (b.live > 0 && !b.faulted) {
    const bool progress = warps_alone ? run_warps_alone(w, b, warps, seed) : run_round(w, b, order);
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
}

// After the block: its fault in words, its shared memory checked and freed, its sync
// objects freed (or kept for the launch's end), and its fault handed to the launch
// (the fault of the lowest block wins, as the order the blocks ran in may vary).
WB_EMU_NO_TSAN void retire_block(Worker& w, Launch& launch, Block& b) {
  if (b.memory_fault) b.fault = Fault{kIllegalAddress, memory_fault_message(b)};
  if (b.counters) end_counting(b);
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
    for (Thread& t : b.threads) __asan_unpoison_memory_region(t.stack.base, t.stack.size);
#endif
  if (b.faulted) {
    std::lock_guard<std::mutex> lock(launch.fault_mutex);
    if (launch.fault_block < 0 || b.linear < launch.fault_block) {
      launch.fault_block = b.linear;
      launch.fault = b.fault;
    }
    launch.faulted = true;
  }
  w.block = nullptr;
}

WB_EMU_NO_TSAN void run_block(Worker& w, Launch& launch, long linear) {
  Block b;
  make_block(w, launch, linear, b);
  if (counted(launch, linear)) begin_counting(b);
  const std::vector<int> order = draw_schedule(launch, b);
  w.scheduler_san.tsan_fiber = fiber::current_tsan_fiber();
  // The threads start after the block was set up (ThreadSanitizer: the scheduler wrote
  // what they read).
  fiber::release(&b.syncs->start);
  schedule_block(w, b, order, block_seed(launch, b));
  retire_block(w, launch, b);
}

// The order a grid's blocks start in (see Schedule). serial_if_polling, run one at a
// time: block 0 first (the usual victim of a wait for a later block, which then faults)
// and the rest shuffled; forward and parallel: in index order. shuffled: reversed, or
// shuffled with block 0 moved to the end, drawn from the seed for each launch. Block 0
// comes last in both, so that a block that assumes it starts first is preceded by all
// the others, and with more blocks than workers some of them have finished before it
// starts, whatever the number of workers.
std::vector<long> block_order(const Launch& launch, long blocks) {
  std::vector<long> order(static_cast<std::size_t>(blocks));
  for (long i = 0; i < blocks; ++i) order[std::size_t(i)] = i;
  const Schedule::Blocks mode = launch.schedule.blocks;
  if (mode == Schedule::Blocks::forward || mode == Schedule::Blocks::parallel || blocks < 2) return order;
  const uint64_t draw = mix(launch.schedule.seed ^ mix(launch.number + 0x5bd1e995ull));
  std::mt19937_64 rng(draw);
  if (mode == Schedule::Blocks::serial_if_polling) {
    std::shuffle(order.begin() + 1, order.end(), rng);  // block 0 first: see Schedule
  } else if (draw % 2 == 0) {
    std::reverse(order.begin(), order.end());
  } else {
    std::shuffle(order.begin() + 1, order.end(), rng);
    std::rotate(order.begin(), order.begin() + 1, order.end());  // block 0 last
  }
  return order;
}

}  // namespace

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

void run_grid(Launch& run) {
  Context& c = context();
  const LaunchSpec& spec = *run.spec;
  const long blocks = long(spec.grid.x) * long(spec.grid.y) * long(spec.grid.z);
  bool parallel =
      run.schedule.blocks == Schedule::Blocks::parallel || run.schedule.blocks == Schedule::Blocks::shuffled;
  if (run.schedule.blocks == Schedule::Blocks::serial_if_polling) {
    std::lock_guard<std::mutex> lock(c.mutex);
    parallel = c.polling_kernels.count(spec.kernel) == 0;
  }
  if (run.only_sampled) {
    for (long i : run.counted_blocks) {
      if (run.faulted) break;
      run_block(worker(), run, i);
    }
  } else if (parallel && parallel_blocks() && blocks > 1) {
    // The workers take the blocks in the order's sequence, one at a time.
    const std::vector<long> order = block_order(run, blocks);
#pragma omp parallel for schedule(dynamic, 1)
    for (long k = 0; k < blocks; ++k) {
      if (run.faulted) continue;
      run_block(worker(), run, order[std::size_t(k)]);
    }
  } else {
    for (long i : block_order(run, blocks)) {
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
}

}  // namespace wb::emu::internal

namespace wb::emu {
using namespace internal;

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

[[noreturn]] void trap(Site site, const char* what) {
  raise(kLaunchFailure, "trap", std::string(what) + " at " + site_text(site));
}

}  // namespace wb::emu
