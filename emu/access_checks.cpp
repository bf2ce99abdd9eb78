// The access checks of the plain build: every global and shared access the compiler's
// instrumentation reports (on_access) is checked against the canaries around device
// buffers and shared arrays (memcheck of reads), against the plain and atomic writes of
// other blocks of the same launch (racecheck across blocks), counted for the counters, and
// is a point where the scheduler may switch threads (so that races between the threads
// of a block show in some schedule) or notice a thread that only spins.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "emu/internal.h"
#include "emu/symbols.h"

namespace wb::emu {
using namespace internal;

bool reports_accesses() { return WB_EMU_REPORTS_ACCESSES; }

namespace {

// memcheck of a reported read (the plain build's): one that lies in a canary faults
// as a read past a device buffer does on a GPU under compute-sanitizer, so that a read
// whose value is discarded is caught too. The block faults and the thread is abandoned
// (as at a guard page): it is never resumed.
WB_EMU_NO_TSAN void check_read(Worker& w, Block& b, Thread& t, const void* address, std::size_t bytes,
                               const void* pc) {
  t.checking_pc = pc;  // canary_read reads the bytes: a guard page faults as this access
  const std::string past = canary_read(b, address, bytes);
  t.checking_pc = nullptr;
  if (past.empty()) return;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%p", address);
  record_fault(b, Fault{kIllegalAddress, "memcheck: " + where(b, &t) + ": a read of " + std::to_string(bytes) +
                                             " bytes at " + hex + ", " + past + ", in " + code_location(pc)});
  t.yielded_at_access = true;
  yield(w, t);
  std::abort();  // a faulted block's threads are never resumed
}

// memcheck of a reported write: one into a canary faults before it lands, naming the
// thread and the line that wrote (the canaries' scan after the block or the launch can
// name only the buffer). The block faults and the thread is abandoned, as for a read.
WB_EMU_NO_TSAN void check_write(Worker& w, Block& b, Thread& t, const void* address, std::size_t bytes,
                                const void* pc) {
  t.checking_pc = pc;
  const std::string past = canary_read(b, address, bytes);  // the bytes still hold the canary
  t.checking_pc = nullptr;
  if (past.empty()) return;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%p", address);
  record_fault(b, Fault{kIllegalAddress, "memcheck: " + where(b, &t) + ": a write of " + std::to_string(bytes) +
                                             " bytes at " + hex + ", " + past + ", in " + access_site(pc)});
  t.yielded_at_access = true;
  yield(w, t);
  std::abort();  // a faulted block's threads are never resumed
}

// racecheck across blocks (the plain build's interleaving pass). Nothing orders two
// blocks of one launch by itself (a __syncthreads orders the threads of its own block
// only; a GPU may run the blocks at once or in any order), so the record is per launch
// (Launch::written), never cleared at a barrier; blocks that write the same bytes in
// different launches pass (each launch starts a new record). Two races are faults:
//   - a plain store to a byte of a device buffer that another block stored to with a
//     plain store, whatever either block did in between (a read-modify-write without an
//     atomic, out[i] += 1 by two blocks, is a store by each);
//   - a plain store to a byte that another block updated atomically, or an atomic update
//     of a byte another block stored to plainly (either order: a block zeroing what the
//     others add to with atomicAdd), unless the two blocks are ordered.
// Atomics against atomics are legal, and reads are not compared (a block may read what
// another wrote once a flag set with an atomic says it is there).
//
// Ordered, here, is the last-block pattern's order: block A's write, then a
// __threadfence by any of A's threads, then an atomic write by A to an address (the
// ticket); block B's atomic on that address afterwards acquires A's fence, and B's
// later writes are ordered after A's writes made before that fence (the emulator runs
// atomics sequentially consistent, so B's atomic sees A's). A block whose own atomic
// write to the bytes came after the other block's atomic is ordered after it too (one
// location's updates are seen in one order). What this does not model: ordering
// through a chain of blocks (A to B by one address, B to C by another: C is not
// ordered after A), fences of single threads (a fence by any thread of the block
// publishes everything the block wrote before it, in the emulator's order, which is
// laxer than a GPU), __threadfence_block (counted as a __threadfence: the shim gives
// both one fence), volatile accesses (neither plain nor atomic here), and more than
// kPublishedPerFence atomic writes published per fence (the ticket comes right after
// the fence; the atomics after it are not tracked, so that a kernel that fences and
// then adds a whole buffer atomically keeps its record small).
constexpr uint32_t kPublishedPerFence = 8;

// Whether [address, address + bytes) lies in one of the launch's device buffers: not
// shared memory, not the heap (a std::string in a kernel's fault path), both of which
// a later block may be given again once freed.
WB_EMU_NO_TSAN bool in_device_buffer(const Launch& launch, const void* address, std::size_t bytes) {
  const auto& r = launch.device_ranges;  // sorted [begin, end) of the device buffers
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  auto it = std::upper_bound(r.begin(), r.end(), std::make_pair(at, ~std::uintptr_t(0)));
  return bytes > 0 && it != r.begin() && at < std::prev(it)->second;
}

WB_EMU_NO_TSAN Launch::WrittenShard& shard_of(Launch& launch, std::uintptr_t chunk) {
  const std::uintptr_t page = chunk / Launch::kChunksPerPage;
  return launch.written[(page ^ (page >> 7)) % Launch::kWrittenShards];
}

// Whether block b is ordered after what block `other` wrote when it had made `fences`
// fences: `other` fenced again after the write and b acquired that fence.
WB_EMU_NO_TSAN bool ordered_after(const Block& b, int32_t other, uint32_t fences) {
  const auto it = b.acquired.find(other);
  return it != b.acquired.end() && it->second > fences;
}

// A race: the block faults, naming both writes, and the thread is abandoned.
[[noreturn]] WB_EMU_NO_TSAN void cross_block_race(Worker& w, Block& b, Thread& t, std::size_t bytes, std::uintptr_t at,
                                                  const void* pc, bool atomic, int32_t other, bool other_atomic,
                                                  const void* other_pc) {
  const LaunchSpec& spec = *b.launch->spec;
  const Dim3 other_idx{unsigned(other % spec.grid.x), unsigned((other / spec.grid.x) % spec.grid.y),
                       unsigned(other / (long(spec.grid.x) * spec.grid.y))};
  unlock_atomics();  // the thread is abandoned: the other blocks' atomics go on
  const std::string mine = atomic ? "an atomic update" : "a plain write";
  const std::string theirs = other_atomic ? "atomic update" : "plain write";
  const std::string why =
      atomic || other_atomic
          ? "a plain write and an atomic update of one word by two blocks of one launch race unless the blocks are "
            "ordered (the writer's __threadfence, then an atomic of its that the other block's atomic reads after it, "
            "as when the last block to draw a ticket writes what the others added)"
          : "two blocks of one launch write one word with no atomic (a __syncthreads orders only its own block's "
            "threads, and nothing orders the blocks of a launch)";
  record_fault(
      b, Fault{kLaunchFailure, "racecheck: " + where(b, &t) + ": " + mine + " of " + std::to_string(bytes) +
                                   " bytes to " + describe_address(b, reinterpret_cast<const void*>(at)) + ", in " +
                                   code_location(pc) + ", races with block " + dim_text(other_idx) + "'s " + theirs +
                                   " of the same byte, in " + code_location(other_pc) + ": " + why});
  t.yielded_at_access = true;
  yield(w, t);
  std::abort();  // a faulted block's threads are never resumed
}

WB_EMU_NO_TSAN void check_cross_block_write(Worker& w, Block& b, Thread& t, const void* address, std::size_t bytes,
                                            const void* pc) {
  Launch& launch = *b.launch;
  if (!in_device_buffer(launch, address, bytes)) return;
  const auto me = int32_t(b.linear);
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t last = first + bytes - 1;
  int32_t other = -1;
  bool other_atomic = false;
  const void* other_pc = nullptr;
  std::uintptr_t at = 0;
  for (std::uintptr_t chunk = first >> 3; chunk <= (last >> 3) && other < 0; ++chunk) {
    Launch::WrittenShard& shard = shard_of(launch, chunk);
    std::lock_guard<std::mutex> lock(shard.mutex);
    Launch::WrittenChunk& c = shard.plain(chunk);
    const auto atomic = shard.atomic_chunks.find(chunk);
    for (int i = 0; i < 8; ++i) {
      const std::uintptr_t byte = (chunk << 3) + std::uintptr_t(i);
      if (byte < first || byte > last) continue;
      if (c.block[i] >= 0 && c.block[i] != me && other < 0) {
        other = c.block[i];
        other_pc = c.pc[i];
        at = byte;
      }
      if (atomic != shard.atomic_chunks.end() && other < 0) {
        const Launch::WrittenChunk& a = atomic->second;
        if (a.block[i] >= 0 && a.block[i] != me && !ordered_after(b, a.block[i], a.fences[i])) {
          other = a.block[i];
          other_pc = a.pc[i];
          other_atomic = true;
          at = byte;
        }
      }
      c.block[i] = me;
      c.pc[i] = pc;
      c.fences[i] = b.fences;
    }
  }
  if (other >= 0) cross_block_race(w, b, t, bytes, at, pc, false, other, other_atomic, other_pc);
}

// An atomic of the block (a read, or a read-modify-write or store that changed the
// value): it acquires the fences published at its address, publishes the block's own
// (after a fence), and, a write, is checked against other blocks' plain writes and
// recorded.
WB_EMU_NO_TSAN void check_cross_block_atomic(Worker& w, Block& b, Thread& t, const void* address, std::size_t bytes,
                                             bool write, const void* pc) {
  Launch& launch = *b.launch;
  if (!in_device_buffer(launch, address, bytes)) return;
  const auto me = int32_t(b.linear);
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t last = first + bytes - 1;
  {
    Launch::WrittenShard& shard = shard_of(launch, first >> 3);
    std::lock_guard<std::mutex> lock(shard.mutex);
    const auto seen = shard.published.find(first);
    if (seen != shard.published.end())
      for (const auto& [block, fences] : seen->second)
        if (block != me) b.acquired[block] = std::max(b.acquired[block], fences);
    if (write && b.fences > 0 && b.published_since_fence < kPublishedPerFence) {
      ++b.published_since_fence;
      uint32_t& mine = shard.published[first][me];
      mine = std::max(mine, b.fences);
    }
  }
  if (!write) return;
  int32_t other = -1;
  const void* other_pc = nullptr;
  std::uintptr_t at = 0;
  for (std::uintptr_t chunk = first >> 3; chunk <= (last >> 3) && other < 0; ++chunk) {
    Launch::WrittenShard& shard = shard_of(launch, chunk);
    std::lock_guard<std::mutex> lock(shard.mutex);
    Launch::WrittenChunk& a = shard.atomic_chunks[chunk];
    const Launch::WrittenChunk* plain = shard.find_plain(chunk);
    for (int i = 0; i < 8; ++i) {
      const std::uintptr_t byte = (chunk << 3) + std::uintptr_t(i);
      if (byte < first || byte > last) continue;
      if (plain && other < 0) {
        const Launch::WrittenChunk& c = *plain;
        if (c.block[i] >= 0 && c.block[i] != me && !ordered_after(b, c.block[i], c.fences[i])) {
          other = c.block[i];
          other_pc = c.pc[i];
          at = byte;
        }
      }
      a.block[i] = me;
      a.pc[i] = pc;
      a.fences[i] = b.fences;
    }
  }
  if (other >= 0) cross_block_race(w, b, t, bytes, at, pc, true, other, false, other_pc);
}

}  // namespace

namespace internal {

// The launch whose atomics mutex this OS thread holds (lock_atomics), if any.
thread_local Launch* atomics_held = nullptr;

WB_EMU_NO_TSAN void lock_atomics() {
  Worker* w = tls_worker;
  if (!w || !w->current || !w->block || !w->block->interleave || atomics_held) return;
  atomics_held = w->block->launch;
  atomics_held->atomics_mutex.lock();
}

WB_EMU_NO_TSAN void unlock_atomics() {
  if (!atomics_held) return;
  Launch* held = atomics_held;
  atomics_held = nullptr;
  held->atomics_mutex.unlock();
}

WB_EMU_NO_TSAN void on_fence() {
  Worker* w = tls_worker;
  if (!w || !w->current || !w->block) return;
  ++w->block->fences;
  w->block->published_since_fence = 0;
}

}  // namespace internal

WB_EMU_NO_TSAN void on_access(const void* address, std::size_t bytes, Access kind, const void* pc) {
  Worker* w = tls_worker;
  if (!w || !w->current) return;
  Thread& t = *w->current;
  const char* a = static_cast<const char*>(address);
  const char* stack = static_cast<const char*>(t.stack.base);
  const char* builtins = reinterpret_cast<const char*>(&t.builtins);
  if ((a >= stack && a < stack + t.stack.size) ||           // its own local memory
      (a >= builtins && a < builtins + sizeof t.builtins)) {  // threadIdx and friends: registers on a GPU
    unlock_atomics();
    return;
  }
  Block& b = *w->block;
  // An atomic is checked across blocks while lock_atomics still holds (it is recorded in
  // the order the atomics took effect), then lets go before anything may switch threads.
  const bool counting = b.counters && b.counters->counts(t);
  if ((kind == Access::atomic_read || kind == Access::atomic_write) && b.interleave && !counting)
    check_cross_block_atomic(*w, b, t, address, bytes, kind == Access::atomic_write, pc);
  unlock_atomics();
  if (kGuardPages && (kind == Access::read || kind == Access::volatile_read || kind == Access::atomic_read))
    check_read(*w, b, t, address, bytes, pc);
  if (kGuardPages && (kind == Access::write || kind == Access::volatile_write || kind == Access::atomic_write))
    check_write(*w, b, t, address, bytes, pc);
  if (counting && !t.uncounted) count_access(b, t, address, bytes, kind, pc);
  switch (kind) {
    case Access::read:
    case Access::write:
    case Access::volatile_write:
    case Access::atomic_write:
      if (kind != Access::read) t.quiet = 0;  // a write: progress
      if (kind == Access::write && b.interleave && !counting) check_cross_block_write(*w, b, t, address, bytes, pc);
      if (counting) break;  // counting: every access yields, so that the lanes keep in step
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
  t.yielded_at_access = true;
  yield(*w, t);
}

}  // namespace wb::emu
