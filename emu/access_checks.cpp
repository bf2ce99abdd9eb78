// The access checks of the plain build: every global and shared access the compiler's
// instrumentation reports (on_access) is checked against the canaries around device
// buffers and shared arrays (memcheck of reads), against the plain writes of other
// blocks of the same launch (racecheck across blocks), counted for the counters, and
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

// racecheck across blocks (the plain build's interleaving pass): a plain store to a byte
// of a device buffer that another block of the launch stored to with a plain store is a
// race, whatever barriers either block passed: a __syncthreads orders the threads of its
// own block only, and nothing orders two blocks of one launch (a GPU may run them at
// once or in any order), so the record is per launch (Launch::written), never cleared at
// a barrier. Atomics are not recorded, so blocks adding with atomicAdd pass; blocks that
// write the same bytes in different launches pass (each launch starts a new record). A
// read-modify-write without an atomic (out[i] += 1 by two blocks) is a store by each.
// Reads are not compared: a block may read what another wrote once a flag set with an
// atomic says it is there.
WB_EMU_NO_TSAN void check_cross_block_write(Worker& w, Block& b, Thread& t, const void* address,
                                            std::size_t bytes, const void* pc) {
  const char* a = static_cast<const char*>(address);
  Launch& launch = *b.launch;
  // Device buffers only: not shared memory, not the heap (a std::string in a kernel's
  // fault path), both of which a later block may be given again once freed.
  {
    const auto& r = launch.device_ranges;  // sorted [begin, end) of the device buffers
    const auto at = reinterpret_cast<std::uintptr_t>(a);
    auto it = std::upper_bound(r.begin(), r.end(), std::make_pair(at, ~std::uintptr_t(0)));
    if (bytes == 0 || it == r.begin() || at >= std::prev(it)->second) return;
  }
  const auto me = int32_t(b.linear);
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(a);
  const std::uintptr_t last = first + bytes - 1;
  long other = -1;
  const void* other_pc = nullptr;
  std::uintptr_t at = 0;
  for (std::uintptr_t chunk = first >> 3; chunk <= (last >> 3) && other < 0; ++chunk) {
    Launch::WrittenShard& shard = launch.written[(chunk ^ (chunk >> 7)) % Launch::kWrittenShards];
    std::lock_guard<std::mutex> lock(shard.mutex);
    Launch::WrittenChunk& c = shard.chunks[chunk];
    for (int i = 0; i < 8; ++i) {
      const std::uintptr_t byte = (chunk << 3) + std::uintptr_t(i);
      if (byte < first || byte > last) continue;
      if (c.block[i] >= 0 && c.block[i] != me && other < 0) {
        other = c.block[i];
        other_pc = c.pc[i];
        at = byte;
      }
      c.block[i] = me;
      c.pc[i] = pc;
    }
  }
  if (other < 0) return;
  const LaunchSpec& spec = *launch.spec;
  const Dim3 other_idx{unsigned(other % spec.grid.x), unsigned((other / spec.grid.x) % spec.grid.y),
                       unsigned(other / (long(spec.grid.x) * spec.grid.y))};
  record_fault(b, Fault{kLaunchFailure,
                        "racecheck: " + where(b, &t) + ": a plain write of " + std::to_string(bytes) + " bytes to " +
                            describe_address(b, reinterpret_cast<const void*>(at)) + ", in " + code_location(pc) +
                            ", races with block " + dim_text(other_idx) + "'s plain write of the same byte, in " +
                            code_location(other_pc) +
                            ": two blocks of one launch write one word with no atomic (a __syncthreads orders only "
                            "its own block's threads, and nothing orders the blocks of a launch)"});
  t.yielded_at_access = true;
  yield(w, t);
  std::abort();  // a faulted block's threads are never resumed
}

}  // namespace

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
  if (kGuardPages && (kind == Access::read || kind == Access::volatile_read || kind == Access::atomic_read))
    check_read(*w, b, t, address, bytes, pc);
  if (kGuardPages && (kind == Access::write || kind == Access::volatile_write || kind == Access::atomic_write))
    check_write(*w, b, t, address, bytes, pc);
  const bool counting = b.counters && b.counters->counts(t);
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
