// The emulator's side of the tensor cores: the warp matrix functions of mma.h
// (emu/include/mma.h: a collective of the whole warp, and the fragment layouts drawn
// per run) and what the tensor-core instructions of emu/tensor_core_instructions.h
// need from the block they run in (emu/tensor_core_state.h: the shared-memory checks,
// a fault at a call site, each thread's queue of cp.async copies).
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "emu/internal.h"

namespace wb::emu {
using namespace internal;

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
  // Copied inline, not by std::memcpy: ThreadSanitizer intercepts memcpy, and the
  // queue, the worker's, is reused by the threads of the blocks that follow, which
  // nothing orders after this one (a queue's slot is the emulator's, not shared memory).
  switch (bytes) {
    case 4: __builtin_memcpy(c.data, data, 4); break;
    case 8: __builtin_memcpy(c.data, data, 8); break;
    case 16: __builtin_memcpy(c.data, data, 16); break;
    default:
      for (std::size_t i = 0; i < bytes; ++i) static_cast<volatile unsigned char*>(c.data)[i] = data[i];
  }
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
