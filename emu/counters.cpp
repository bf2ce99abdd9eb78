// The counters (emu/emu.h, SiteCounters): the accesses of a block's threads grouped
// into warp-level requests, and each request counted as Nsight Compute counts it:
// sectors of global memory, wavefronts of shared memory, active lanes.
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>
#include <stdexcept>
#include <utility>

#include "emu/internal.h"

namespace wb::emu::internal {
namespace {

// [begin, end) byte ranges of the active lanes, merged: the unique bytes they need.
uint64_t unique_bytes(const Request& r) {
  std::pair<uint64_t, uint64_t> ranges[32];
  int n = 0;
  for (int l = 0; l < 32; ++l)
    if (r.mask & (1u << l)) ranges[n++] = {r.address[l], r.address[l] + r.bytes};
  std::sort(ranges, ranges + n);
  uint64_t total = 0, covered = 0;  // covered: the end of what is counted so far
  for (int i = 0; i < n; ++i) {
    const uint64_t begin = std::max(ranges[i].first, covered);
    if (ranges[i].second > begin) total += ranges[i].second - begin;
    covered = std::max(covered, ranges[i].second);
  }
  return total;
}

// The distinct 32-byte sectors the active lanes touch.
uint64_t sectors(const Request& r) {
  uint64_t touched[64];
  int n = 0;
  for (int l = 0; l < 32; ++l) {
    if (!(r.mask & (1u << l))) continue;
    for (uint64_t s = r.address[l] / 32; s <= (r.address[l] + r.bytes - 1) / 32 && n < 64; ++s) touched[n++] = s;
  }
  std::sort(touched, touched + n);
  return uint64_t(std::unique(touched, touched + n) - touched);
}

// Shared memory: the lanes in phases of 128 bytes (32 lanes of 4-byte words, 16 of 8,
// 8 of 16), each phase as many wavefronts as the most distinct words one of the 32
// banks holds for it (lanes reading one word share it).
uint64_t wavefronts(const Request& r) {
  const unsigned per_lane = std::max(4u, r.bytes);
  const int lanes_per_phase = int(128 / per_lane);
  uint64_t total = 0;
  for (int first = 0; first < 32; first += lanes_per_phase) {
    uint64_t words[32 * 4];
    int n = 0;
    for (int l = first; l < first + lanes_per_phase; ++l) {
      if (!(r.mask & (1u << l))) continue;
      for (uint64_t w = r.address[l] / 4; w <= (r.address[l] + r.bytes - 1) / 4; ++w) words[n++] = w;
    }
    if (n == 0) continue;
    std::sort(words, words + n);
    n = int(std::unique(words, words + n) - words);
    int per_bank[32] = {};
    int most = 0;
    for (int i = 0; i < n; ++i) most = std::max(most, ++per_bank[words[i] % 32]);
    total += uint64_t(most);
  }
  return total;
}

// The sectors of a global request into its warp's footprint (LaunchCounters::Footprint).
void add_footprint(std::unordered_set<uint64_t>& sectors, const Request& r) {
  for (int l = 0; l < 32; ++l) {
    if (!(r.mask & (1u << l))) continue;
    for (uint64_t s = r.address[l] / 32; s <= (r.address[l] + r.bytes - 1) / 32; ++s) sectors.insert(s);
  }
}

void fold(BlockCounters& c, std::size_t warp, const void* pc, const Request& r) {
  SiteCounters& s = c.sites[SiteKey{pc, r.shared, r.store}];
  s.pc = pc;
  s.instruction_site = r.instruction_site;
  s.shared = r.shared;
  s.store = r.store;
  s.bytes = std::max(s.bytes, r.bytes);
  ++s.requests;
  s.active_lanes += uint64_t(__builtin_popcount(r.arrived));
  const uint64_t needed = unique_bytes(r);
  if (r.shared) {
    s.wavefronts += wavefronts(r);
    s.ideal_wavefronts += (needed + 127) / 128;
  } else {
    const uint64_t touched = sectors(r);
    s.sectors += touched;
    s.ideal_sectors += (needed + 31) / 32;
    add_footprint((r.store ? c.written_sectors : c.read_sectors)[warp], r);
    if (r.atomic) {
      c.atomic_sector_ops += touched;
      add_footprint(c.atomic_sectors[warp], r);
    }
  }
}

// A block's counters of a site added into the launch's.
void add(SiteCounters& total, const SiteCounters& s) {
  total.pc = s.pc;
  total.instruction_site = s.instruction_site;
  total.collective = s.collective;
  total.shared = s.shared;
  total.store = s.store;
  total.bytes = std::max(total.bytes, s.bytes);
  total += s;
}

bool in_device_memory(const Launch& launch, std::uintptr_t a) {
  const auto& r = launch.device_ranges;
  auto it = std::upper_bound(r.begin(), r.end(), std::make_pair(a, ~std::uintptr_t(0)));
  return it != r.begin() && a < std::prev(it)->second;
}

bool in_shared(const Block& b, const char* a) {
  for (int i = 0; i < b.shared_count; ++i)
    if (a >= b.shared[i].data && a < b.shared[i].data + b.shared[i].bytes) return true;
  return b.dynamic && a >= b.dynamic && a < b.dynamic + b.launch->spec->dynamic_shared;
}

}  // namespace

// A tensor-core instruction's or a collective's site: its "file:line" relative to the
// repository (site_text), kept for the process; the pointer is the site's identity, as an
// access's return address is. Called at every such instruction of a counted warp: each
// OS thread remembers the sites it has interned, so that only a site's first call takes
// the lock.
const char* instruction_site(const Site& at, const char* prefix) {
  thread_local std::map<std::tuple<const char*, int, const char*>, const char*> known;
  const auto key = std::make_tuple(at.file, at.line, prefix);
  if (auto it = known.find(key); it != known.end()) return it->second;
  static std::mutex mutex;
  static std::set<std::string> sites;
  std::lock_guard<std::mutex> lock(mutex);
  // The prefix keeps a collective's identity apart from a memory request's at one line.
  const char* interned = sites.insert(prefix + site_text(at)).first->c_str() + std::strlen(prefix);
  known.emplace(key, interned);
  return interned;
}

namespace {

// The turns a warp-level synchronisation divides. Every lane of `mask` has passed it
// (a collective's group completing): a pending request of the warp that some of those
// lanes joined before it, while others of them had not, is complete. Those others reach
// its instruction after the synchronisation and the lanes in it reached it before: on a
// GPU the instruction is issued again for them, a request of its own with its own lanes
// (the two half-warps of a loop taking turns, a __syncwarp between). Lanes outside the
// mask divide nothing here (a half-warp's shuffle while the other half goes on: both
// halves may still meet at the next load), and neither does a request that every lane
// of the mask had joined, or none: folded now or at the end of the block, the figures
// are the same.
//
// A synchronisation of every live lane of the warp puts them all at one point of the
// program: every pending request is complete, and each lane's visits start again from
// 0, so that after it lane i's k-th visit to a site pairs with lane j's k-th (before
// it, lanes whose loops ran different trip counts visited a site different numbers of
// times, and pairing by the counts since the block began would join one row's last
// iteration with the next row's first). __syncthreads does the same for every warp,
// found when a lane joins (join: the block's barrier generation).
void close_turns(Block& b, std::size_t warp, unsigned mask) {
  BlockCounters& c = *b.counters;
  auto& pending = c.pending[warp];
  const bool whole_warp = (b.warps[warp].live & ~mask) == 0;
  for (auto it = pending.begin(); it != pending.end();) {
    const Request& r = it->second;
    if (whole_warp || ((r.arrived & mask) && (mask & ~r.arrived))) {
      fold(c, warp, std::get<0>(it->first.first), r);
      it = pending.erase(it);
    } else {
      ++it;
    }
  }
  if (whole_warp)
    for (std::size_t l = 0; l < 32 && warp * 32 + l < c.visits.size(); ++l) c.visits[warp * 32 + l].clear();
}

}  // namespace

void count_collective(Block& b, const Thread& t, const Site& at, unsigned mask) {
  if (!b.counters || !b.counters->counts(t)) return;
  const char* site = instruction_site(at, "collective ");
  SiteCounters& s = b.counters->sites[SiteKey{site, false, false}];
  s.pc = site;
  s.instruction_site = site;
  s.collective = true;
  ++s.requests;
  s.active_lanes += unsigned(__builtin_popcount(mask));
  close_turns(b, std::size_t(t.warp), mask);
}

std::vector<long> sampled_blocks(uint64_t blocks, uint64_t sample) {
  std::vector<long> out;
  if (sample == 0 || sample >= blocks) return out;  // every block
  if (sample == 1) return {0};
  for (uint64_t k = 0; k < sample; ++k) out.push_back(long(k * (blocks - 1) / (sample - 1)));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool counted(const Launch& launch, long block) {
  return launch.counting && (launch.counted_blocks.empty() ||
                             std::binary_search(launch.counted_blocks.begin(), launch.counted_blocks.end(), block));
}

void begin_counting(Block& b) {
  b.counters = new BlockCounters;
  b.counters->pending.resize(b.warps.size());
  b.counters->visits.resize(b.threads.size());
  b.counters->visits_generation.assign(b.threads.size(), b.barrier_generation);
  b.counters->vectors.resize(b.threads.size());
  b.counters->read_sectors.resize(b.warps.size());
  b.counters->written_sectors.resize(b.warps.size());
  b.counters->atomic_sectors.resize(b.warps.size());
  const std::size_t warps = b.warps.size();
  // With only_sampled, the block's warps are sampled as a grid's blocks are: the first,
  // the last and evenly between, kSampledWarps of them (none left out: every warp).
  const std::vector<long> sample = b.launch->only_sampled ? sampled_blocks(warps, kSampledWarps) : std::vector<long>{};
  b.counters->counted_warps.assign(warps, sample.empty() ? 1 : 0);
  for (long w : sample) b.counters->counted_warps[std::size_t(w)] = 1;
  uint64_t counted = 0;
  for (char c : b.counters->counted_warps) counted += uint64_t(c);
  b.launch->counted_warps += counted;
}

void announce_vector(Block& b, const Thread& t, const void* p, std::size_t bytes, const void* pc) {
  if (!b.counters->counts(t)) return;
  b.counters->vectors[std::size_t(t.linear)] = VectorAccess{reinterpret_cast<std::uintptr_t>(p), bytes, pc, false};
}

namespace {

// The calling lane joins the warp's request at (pc, its visit count there), giving its
// address (or none: ldmatrix's lanes above its rows); the request is counted once every
// live lane of the warp has joined, or when a synchronisation ends its turn
// (close_turns). The visit count pairs lane i's k-th visit with lane j's k-th, which
// is when they run together: counting keeps the lanes in step, and a lane that
// diverged and reconverged joins the request the others left pending for it.
void join(Block& b, const Thread& t, const void* pc, const void* address, std::size_t bytes, bool shared, bool store,
          bool gives, const char* instruction, bool atomic = false) {
  BlockCounters& c = *b.counters;
  const SiteKey site{pc, shared, store};
  const std::size_t me = std::size_t(t.linear);
  if (c.visits_generation[me] != b.barrier_generation) {
    // A __syncthreads since the lane's last access: its visits start again from 0, as
    // every lane's of the block do (close_turns, for a barrier).
    c.visits[me].clear();
    c.visits_generation[me] = b.barrier_generation;
  }
  const uint64_t visit = c.visits[me][site]++;
  auto& pending = c.pending[std::size_t(t.warp)];
  Request& r = pending[{site, visit}];
  if (r.arrived != 0 && r.barrier_generation != b.barrier_generation) {
    // Its lanes joined before a __syncthreads that every live lane of the warp took
    // part in: complete, and this lane's turn is a later one (close_turns).
    fold(c, std::size_t(t.warp), pc, r);
    r = Request{};
  }
  if (r.arrived == 0) {
    r.bytes = unsigned(bytes);
    r.shared = shared;
    r.store = store;
    r.instruction_site = instruction;
    r.atomic = atomic;
    r.barrier_generation = b.barrier_generation;
  }
  r.arrived |= 1u << t.lane;
  if (gives) {
    r.mask |= 1u << t.lane;
    r.address[t.lane] = reinterpret_cast<uint64_t>(address);
  }
  const unsigned live = b.warps[std::size_t(t.warp)].live;
  if ((r.arrived & live) == live) {
    fold(c, std::size_t(t.warp), pc, r);
    pending.erase({site, visit});
  }
}

}  // namespace

void count_access(Block& b, const Thread& t, const void* address, std::size_t bytes, Access kind, const void* pc) {
  BlockCounters& c = *b.counters;
  VectorAccess& vector = c.vectors[std::size_t(t.linear)];
  if (vector.bytes) {
    const auto a = reinterpret_cast<std::uintptr_t>(address);
    if (a >= vector.begin && a + bytes <= vector.begin + vector.bytes) {
      if (vector.counted) return;  // a later part of the vector access, counted with the first
      vector.counted = true;
      address = reinterpret_cast<const void*>(vector.begin);
      bytes = vector.bytes;
      pc = vector.pc;
    } else {
      vector.bytes = 0;  // past the vector access: it has ended
    }
  }
  const bool shared = in_shared(b, static_cast<const char*>(address));
  if (!shared && !in_device_memory(*b.launch, reinterpret_cast<std::uintptr_t>(address)))
    return;  // the kernel's parameters, a local copy: neither global nor shared memory
  const bool atomic = !shared && (kind == Access::atomic_read || kind == Access::atomic_write);
  c.atomic_ops += atomic;
  join(b, t, pc, address, bytes, shared, kind != Access::read && kind != Access::volatile_read, true, nullptr, atomic);
}

void count_instruction(Block& b, const Thread& t, const char* site, const void* address, std::size_t bytes,
                       bool shared, bool store, bool gives) {
  if (!b.counters->counts(t)) return;
  join(b, t, site, address, bytes, shared, store, gives, site);
}

void end_counting(Block& b) {
  BlockCounters& c = *b.counters;
  for (std::size_t w = 0; w < c.pending.size(); ++w)
    for (const auto& [key, r] : c.pending[w]) fold(c, w, std::get<0>(key.first), r);
  Launch& launch = *b.launch;
  // The block's distinct sectors (read, written, of its atomics): its counted warps'
  // together. Only a sampled grid's estimate needs them (wb: counters.cpp).
  const bool sampled = !launch.counted_blocks.empty();
  auto block_union = [sampled](const std::vector<std::unordered_set<uint64_t>>& warps) -> std::size_t {
    if (!sampled) return 0;
    if (warps.size() == 1) return warps.front().size();
    std::unordered_set<uint64_t> all;
    for (const auto& w : warps) all.insert(w.begin(), w.end());
    return all.size();
  };
  const std::size_t block_read = block_union(c.read_sectors), block_written = block_union(c.written_sectors),
                    block_atomic = block_union(c.atomic_sectors);
  {
    std::lock_guard<std::mutex> lock(launch.counters_mutex);
    for (const auto& [key, s] : c.sites) add(launch.sites[key], s);
    for (const auto& sectors : c.read_sectors) {
      launch.read_warp_sectors += sectors.size();
      launch.reading_warps += !sectors.empty();
      launch.read_sectors.insert(sectors.begin(), sectors.end());
    }
    for (const auto& sectors : c.written_sectors) {
      launch.written_warp_sectors += sectors.size();
      launch.writing_warps += !sectors.empty();
      launch.written_sectors.insert(sectors.begin(), sectors.end());
    }
    for (const auto& sectors : c.atomic_sectors) {
      launch.atomic_warp_sectors += sectors.size();
      launch.atomic_warps += !sectors.empty();
      launch.atomic_sectors.insert(sectors.begin(), sectors.end());
    }
    launch.read_block_sectors += block_read;
    launch.reading_blocks += block_read > 0;
    launch.written_block_sectors += block_written;
    launch.writing_blocks += block_written > 0;
    launch.atomic_block_sectors += block_atomic;
    launch.atomic_blocks += block_atomic > 0;
    launch.atomic_ops += c.atomic_ops;
    launch.atomic_sector_ops += c.atomic_sector_ops;
  }
  delete b.counters;
  b.counters = nullptr;
}

}  // namespace wb::emu::internal

namespace wb::emu {

using internal::tls_worker;

void count_instruction(Site at, const void* address, std::size_t bytes, bool shared, bool store, bool gives) {
  internal::Worker* w = tls_worker;
  if (!w || !w->current || !w->block || !w->block->counters) return;
  internal::count_instruction(*w->block, *w->current, internal::instruction_site(at), address, bytes, shared, store,
                              gives);
}

UncountedScope::UncountedScope() {
  if (internal::Worker* w = tls_worker; w && w->current) ++w->current->uncounted;
}
UncountedScope::~UncountedScope() {
  if (internal::Worker* w = tls_worker; w && w->current) --w->current->uncounted;
}

}  // namespace wb::emu
