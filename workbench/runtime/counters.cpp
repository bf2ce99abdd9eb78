#include "workbench/runtime/counters.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "base/errors.h"
#include "emu/emu.h"
#include "emu/symbols.h"
#include "workbench/runtime/json_integer.h"
#include "workbench/runtime/launch_check.h"

namespace wb {

using nlohmann::json;

std::string SiteCount::verdict() const {
  if (requests == 0) return "no requests";
  if (collective) return fmt::format("{:.1f} active lanes", double(active_lanes) / double(requests));
  if (shared) {
    const double ways = ideal_wavefronts ? double(wavefronts) / double(ideal_wavefronts) : 0.0;
    if (wavefronts <= ideal_wavefronts) return fmt::format("no conflict ({} wavefronts)", wavefronts);
    return fmt::format("{:.3g}-way conflict ({} wavefronts, ideal {})", ways, wavefronts, ideal_wavefronts);
  }
  return fmt::format("{:.1f} sectors/request (ideal {:.1f})", double(sectors) / double(requests),
                     double(ideal_sectors) / double(requests));
}

CounterTotals Counters::totals() const {
  CounterTotals t;
  for (const KernelCount& k : kernels)
    for (const SiteCount& s : k.sites) {
      if (s.collective) {
        t.collectives += s.requests;
        t.collective_lanes += s.active_lanes;
        continue;
      }
      t.active_lanes += s.active_lanes;
      if (s.shared) {
        t.shared_requests += s.requests;
        t.wavefronts += s.wavefronts;
        t.ideal_wavefronts += s.ideal_wavefronts;
      } else {
        t.global_requests += s.requests;
        t.sectors += s.sectors;
        t.ideal_sectors += s.ideal_sectors;
      }
    }
  return t;
}

double Counters::occupancy(int cc) const {
  double lowest = 0;
  bool any = false;
  for (const KernelCount& k : kernels)
    for (const Occupancy& o : k.occupancy)
      if (o.compute_capability == cc) {
        lowest = any ? std::min(lowest, o.fraction()) : o.fraction();
        any = true;
      }
  return lowest;
}

std::string Counters::occupancy_not_computed() const {
  for (const KernelCount& k : kernels)
    if (!k.library && !k.occupancy_not_computed.empty()) return k.occupancy_not_computed;
  return "";
}

bool Counters::sampled() const {
  return std::any_of(kernels.begin(), kernels.end(),
                     [](const KernelCount& k) { return !k.library && k.counted_warps < k.warps; });
}

namespace {

// What a kernel's whole grids touch, per launch, from the footprint of its counted warps,
// estimated two ways, the smaller taken. Warp by warp: the grid's warps are taken to
// touch anything in the proportion the counted ones do, and every further touching warp
// to share with those before it what one counted touching warp shares with the others
// (too many where a block's warps split what every block touches: the partial sums of a
// reduction into one vector). Block by block, where two or more counted blocks touched
// any: a block's touching warps are taken to share with those before them what its
// counted ones share, and every further touching block to share with the blocks before
// it the part of a block that the counted blocks share (all of it for blocks that add
// into the same addresses, none for blocks of their own rows; too many where fewer of a
// block's warps touch any than its counted ones suggest). Exact when every warp was
// counted.
double grid_estimate(const KernelCount& k, const emu::LaunchCounters::Footprint& f) {
  const double n = double(k.launches);
  const double m = double(f.warps) / n;  // counted warps that touched any, per launch
  const double together = double(f.distinct) / n;
  if (m < 1 || k.counted_warps >= k.warps) return together;
  const double summed = double(f.per_warp) / n;
  const double w = double(k.warps) / double(k.counted_warps) * m;  // the grid's touching warps
  const double shared = m > 1 ? (summed - together) / (m - 1) : 0;
  const double by_warp = std::max(together, w * summed / m - (w - 1) * shared);
  const double mb = double(f.blocks) / n;  // counted blocks that touched any, per launch
  if (mb >= 2 && k.counted_blocks > 0) {
    const double counted_warps_per_block = m / mb;
    const double grid_blocks = double(k.blocks) / n * (double(f.blocks) / double(k.counted_blocks));
    const double warps_per_block = std::ceil(k.threads / 32.0) * (m / (double(k.counted_warps) / n));
    const double in_block = double(f.per_block) / n;  // the counted blocks' own, summed
    const double shared_in =
        counted_warps_per_block > 1 ? (summed - in_block) / (m - mb) : 0;  // per further warp of a block
    const double block =
        std::max(in_block / mb, warps_per_block * (summed / m) - (std::max(warps_per_block, 1.0) - 1) * shared_in);
    const double shared_fraction = std::clamp((in_block - together) / (mb - 1) / (in_block / mb), 0.0, 1.0);
    return std::min(by_warp, std::max(together, block * (1 + (grid_blocks - 1) * (1 - shared_fraction))));
  }
  return by_warp;
}

}  // namespace

double KernelCount::distinct_atomic_sectors() const {
  if (library || launches == 0) return 0;
  return double(launches) * grid_estimate(*this, atomic_sectors);
}

double KernelCount::distinct_sectors(bool write) const {
  const emu::LaunchCounters::Footprint& f = write ? write_footprint : read_footprint;
  if (library || launches == 0) return 0;
  const double n = double(launches);
  const double estimate = grid_estimate(*this, f), together = double(f.distinct) / n;
  const double bound = double(touched_bytes) / 32 / n;
  return n * (bound > 0 ? std::min(estimate, std::max(bound, together)) : estimate);
}

Counters Counters::scaled_to_every_block() const {
  Counters out = *this;
  for (KernelCount& k : out.kernels) {
    if (k.library || k.counted_warps == 0 || k.counted_warps == k.warps) continue;
    const double scale = double(k.warps) / double(k.counted_warps);
    for (SiteCount& s : k.sites)
      for (uint64_t emu::AccessCounts::*n : emu::kAccessCounts) s.*n = uint64_t(double(s.*n) * scale + 0.5);
    for (bool write : {false, true}) {
      const uint64_t estimate = uint64_t(k.distinct_sectors(write) + 0.5);
      emu::LaunchCounters::Footprint& fp = write ? k.write_footprint : k.read_footprint;
      // Each warp's own distinct sectors, summed, grow with the warps (what the L1 of a
      // warp's SM is asked for); never fewer than the grid's distinct ones.
      const uint64_t per_warp = std::max(estimate, uint64_t(double(fp.per_warp) * scale + 0.5));
      fp = {per_warp, estimate, fp.warps ? uint64_t(double(fp.warps) * scale + 0.5) : 0, 0, 0};
    }
    const uint64_t atomic_sectors = uint64_t(k.distinct_atomic_sectors() + 0.5);
    k.atomic_sectors = {atomic_sectors, atomic_sectors,
                        k.atomic_sectors.warps ? uint64_t(double(k.atomic_sectors.warps) * scale + 0.5) : 0, 0, 0};
    k.atomic_ops = uint64_t(double(k.atomic_ops) * scale + 0.5);
    k.atomic_sector_ops = uint64_t(double(k.atomic_sector_ops) * scale + 0.5);
    k.counted_blocks = k.blocks;
    k.counted_warps = k.warps;
  }
  return out;
}

std::string site_name(const std::vector<std::string>& lines, const std::string& variant_source) {
  auto file_of = [](const std::string& line) { return line.substr(0, line.rfind(':')); };
  for (const std::string& l : lines)
    if (file_of(l) == variant_source) return l;
  for (const std::string& l : lines)
    if (l.rfind("variants/", 0) == 0) return l;
  for (const std::string& l : lines) {
    const std::string f = file_of(l);
    if (f != "device/cuda/device_utils.cuh" && f != "device/cuda/dialect.cuh" && f != "base/bf16.h") return l;
  }
  return lines.empty() ? "" : lines.front();
}

namespace {

// What the table of compiled kernels says of a counted launch's kernel at sm_80 and
// sm_90: nothing in a build without nvcc or for a kernel it lacks, and then *why (so
// that the line and the report say so instead of leaving occupancy out unexplained).
std::vector<Occupancy> occupancy_of(const emu::LaunchCounters& l, std::string* why) {
  std::vector<Occupancy> out;
  if (!compiled_kernels_known()) {
    *why = "no resource table: this build had no nvcc";
    return out;
  }
  const auto symbol = emu::kernel_symbol(l.function);
  if (!symbol) {
    *why = "the emulator does not know the kernel's symbol, so the resource table cannot be searched";
    return out;
  }
  PlannedKernel k;
  k.name = symbol->name;
  k.unit = symbol->unit;
  k.folder = source_folder(l.file);
  k.threads = int(uint64_t(l.block.x) * l.block.y * l.block.z);
  k.dynamic_shared = l.dynamic_shared;
  bool found = false;  // in the table, at some architecture
  for (int cc : {80, 90}) {
    const int arch = loaded_arch(cc, compiled_archs());
    const CompiledKernel* c = arch ? find_compiled(k, arch) : nullptr;
    if (!c) continue;
    found = true;
    if (auto o = theoretical_occupancy(*c, k.threads, k.dynamic_shared, cc)) out.push_back(*o);
  }
  if (out.empty())
    *why = found ? "the occupancy rules do not cover the table's architectures" : "the resource table has no sm_80 or sm_90 entry for " + symbol->name;
  return out;
}

void add_site(SiteCount& total, const SiteCount& s) {
  total.bytes = std::max(total.bytes, s.bytes);
  total += s;
}

}  // namespace

Counters summarize_counters(const std::vector<emu::LaunchCounters>& launches, const std::string& variant_source,
                            uint64_t sample_blocks) {
  Counters c;
  c.sample_blocks = sample_blocks;
  // A kernel is its name, block size and dynamic shared memory: launches of it with
  // other grids are summed, and so are the program counters of one source line (the
  // unrolled copies of a loop's access).
  using KernelKey = std::tuple<std::string, int, uint64_t>;
  std::map<KernelKey, std::size_t> index;
  std::vector<std::map<std::tuple<std::string, bool, bool>, SiteCount>> sites;
  for (const emu::LaunchCounters& l : launches) {
    const bool library = l.function == nullptr;
    std::string name = l.kernel;
    if (!library)
      if (const auto symbol = emu::kernel_symbol(l.function)) name = symbol->name;
    const int threads = int(uint64_t(l.block.x) * l.block.y * l.block.z);
    const KernelKey key{name, threads, l.dynamic_shared};
    auto [it, added] = index.emplace(key, c.kernels.size());
    if (added) {
      KernelCount k;
      k.kernel = name;
      k.library = library;
      k.threads = threads;
      k.dynamic_shared = l.dynamic_shared;
      if (!library) k.occupancy = occupancy_of(l, &k.occupancy_not_computed);
      c.kernels.push_back(std::move(k));
      sites.emplace_back();
    }
    KernelCount& k = c.kernels[it->second];
    ++k.launches;
    k.flops += l.library_flops;
    k.bytes += l.library_bytes;
    if (const auto& g = l.library_gemm) {
      const auto same = std::find_if(k.gemms.begin(), k.gemms.end(), [&](const KernelCount::Gemm& h) {
        return h.m == g->m && h.n == g->n && h.k == g->k && h.batch == g->batch;
      });
      if (same != k.gemms.end())
        ++same->calls;
      else
        k.gemms.push_back({g->m, g->n, g->k, g->batch, 1});
    }
    k.blocks += l.blocks;
    k.counted_blocks += l.counted_blocks;
    k.warps += l.warps;
    k.counted_warps += l.counted_warps;
    auto add = [](emu::LaunchCounters::Footprint& to, const emu::LaunchCounters::Footprint& more) {
      to.per_warp += more.per_warp;
      to.distinct += more.distinct;
      to.warps += more.warps;
      to.per_block += more.per_block;
      to.blocks += more.blocks;
    };
    add(k.read_footprint, l.read_footprint);
    add(k.write_footprint, l.write_footprint);
    add(k.atomic_sectors, l.atomic_sectors);
    k.touched_bytes += l.touched_bytes;
    k.atomic_ops += l.atomic_ops;
    k.atomic_sector_ops += l.atomic_sector_ops;
    for (const emu::SiteCounters& s : l.sites) {
      SiteCount one;
      if (s.instruction_site) {
        one.site = s.instruction_site;  // already relative to the repository (emu's site_text)
      } else {
        one.site = site_name(emu::source_lines(s.pc), variant_source);
        if (one.site.empty()) one.site = emu::code_location(s.pc);
      }
      one.shared = s.shared;
      one.store = s.store;
      one.collective = s.collective;
      one.bytes = int(s.bytes);
      static_cast<emu::AccessCounts&>(one) = s;
      SiteCount& total = sites[it->second][{one.site + (one.collective ? "|collective" : ""), one.shared, one.store}];
      if (total.site.empty()) {
        total.site = one.site;
        total.shared = one.shared;
        total.store = one.store;
        total.collective = one.collective;
      }
      add_site(total, one);
    }
  }
  for (std::size_t i = 0; i < c.kernels.size(); ++i)
    for (auto& entry : sites[i]) c.kernels[i].sites.push_back(std::move(entry.second));
  return c;
}

std::vector<const SiteCount*> worst_sites(const Counters& c, std::size_t n) {
  std::vector<const SiteCount*> out;
  for (const KernelCount& k : c.kernels)
    for (const SiteCount& s : k.sites)
      if (s.excess() > 0) out.push_back(&s);
  std::stable_sort(out.begin(), out.end(),
                   [](const SiteCount* a, const SiteCount* b) { return a->excess() > b->excess(); });
  if (out.size() > n) out.resize(n);
  return out;
}

}  // namespace wb
