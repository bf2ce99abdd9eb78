#pragma once
// The emulator's counters of one configuration (emu/emu.h, SiteCounters), as wb shows,
// keeps and compares them: each memory site named by a line of the variant's source,
// the launches of one kernel summed, the kernel's theoretical occupancy on sm_80 and
// sm_90 from the table of compiled kernels (contract/launch_resources.h). A record holds
// them as its optional "counters" (docs/formats.md); `wb compare` gates on them.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "contract/launch_resources.h"
#include "emu/emu.h"

namespace wb {

// One static access site of a kernel, summed over its launches and counted blocks: the
// emulator's counts of it (requests, active lanes, sectors, wavefronts).
struct SiteCount : emu::AccessCounts {
  std::string site;  // "variants/layernorm_forward/04_x.cu:57" (site_name)
  bool shared = false, store = false;
  bool collective = false;  // a warp collective: requests (completed groups) and active lanes only
  int bytes = 0;            // per lane and access: 1, 2, 4, 8 or 16 (0 for a collective)

  std::string kind() const;  // "global load", "shared store", "collective"
  // Sectors (global) or wavefronts (shared) beyond the ideal: uncoalesced sectors, bank
  // conflicts.
  uint64_t excess() const {
    return collective ? 0 : shared ? wavefronts - ideal_wavefronts : sectors - ideal_sectors;
  }
  // "8.0 sectors/request (ideal 4.0)", "4-way conflict (4096 wavefronts, ideal 1024)".
  std::string verdict() const;
};

struct KernelCount {
  std::string kernel;  // reduced name ("variants::layernorm_kernel<8>"), or the library call
  bool library = false;  // an emulated library call (cuBLAS): computed on the host, not counted
  double flops = 0, bytes = 0;  // a library call's: what it computes, the fewest bytes it moves
  // A library GEMM's problems, each with the calls that made it (emu::LaunchCounters::Gemm):
  // the tiles and waves of predict.h's library term. Empty for another library call.
  struct Gemm {
    int64_t m = 0, n = 0, k = 0, batch = 1;
    uint64_t calls = 0;
  };
  std::vector<Gemm> gemms;
  int threads = 0;       // per block
  uint64_t dynamic_shared = 0;
  uint64_t launches = 0;
  uint64_t blocks = 0, counted_blocks = 0;  // summed over the launches
  uint64_t warps = 0, counted_warps = 0;    // likewise (wb predict counts up to 4 warps of a block)
  std::vector<Occupancy> occupancy;  // sm_80 and sm_90, where the table knows the kernel
  // Why `occupancy` is empty for a kernel ("" when it is not, and for a library call):
  // "no resource table: this build had no nvcc", or the kernel is not in the table.
  std::string occupancy_not_computed;
  std::vector<SiteCount> sites;      // by site, then kind
  // The global sectors the counted warps touched (emu::LaunchCounters::Footprint), read
  // and written, summed over the launches; and the device buffers they touched, whole.
  emu::LaunchCounters::Footprint read_footprint, write_footprint;
  uint64_t touched_bytes = 0;
  // Global atomics (emu::LaunchCounters): the counted lanes' operations, the sectors
  // their requests touched (summed over the requests) and the distinct sectors they went
  // to, summed over the launches.
  uint64_t atomic_ops = 0, atomic_sector_ops = 0;
  emu::LaunchCounters::Footprint atomic_sectors;

  // The distinct sectors the whole grid reads (or writes) in its launches, as memory
  // behind the caches serves them: exact when every warp was counted; from a sample,
  // estimated by taking what two counted warps share as what every further warp shares
  // with those before it (docs/counters.md), bounded by the touched buffers.
  double distinct_sectors(bool write) const;
  // The distinct sectors the whole grid's atomics go to, estimated alike (not bounded).
  double distinct_atomic_sectors() const;
};

// Totals of a configuration's counted sites.
struct CounterTotals {
  uint64_t global_requests = 0, sectors = 0, ideal_sectors = 0;
  uint64_t shared_requests = 0, wavefronts = 0, ideal_wavefronts = 0;
  uint64_t active_lanes = 0;  // over every memory request
  uint64_t collectives = 0, collective_lanes = 0;
  double sectors_per_request() const { return global_requests ? double(sectors) / global_requests : 0.0; }
  double ideal_sectors_per_request() const { return global_requests ? double(ideal_sectors) / global_requests : 0.0; }
  uint64_t conflicts() const { return wavefronts - ideal_wavefronts; }  // excess shared wavefronts
  double lanes_per_request() const {
    const uint64_t r = global_requests + shared_requests;
    return r ? double(active_lanes) / r : 0.0;
  }
  double lanes_per_collective() const { return collectives ? double(collective_lanes) / collectives : 0.0; }
};

struct Counters {
  uint64_t sample_blocks = 0;  // 0: every block of every launch was counted
  std::vector<KernelCount> kernels;  // in the order of their first launch

  CounterTotals totals() const;
  // The lowest theoretical occupancy of the counted kernels at compute capability cc (0
  // when the table knows none of them).
  double occupancy(int cc) const;
  // Why the occupancy of some counted kernel could not be computed (the first such
  // kernel's KernelCount::occupancy_not_computed), or "" when every one's was.
  std::string occupancy_not_computed() const;
  bool sampled() const;  // some launch counted fewer blocks than it had
  // The counts a full count would give: each kernel's sites scaled by its warps over its
  // counted warps (exact for grids whose warps do alike).
  Counters scaled_to_every_block() const;
};

// The emulator's launches of one configuration, as Counters: sites named for the
// variant whose source is `variant_source`.
Counters summarize_counters(const std::vector<emu::LaunchCounters>& launches, const std::string& variant_source,
                            uint64_t sample_blocks);

// The line that names an access site, from its source lines innermost first
// (emu::source_lines): the variant's own file, else a file of variants/ (an op's shared
// header), else the innermost line outside the device helpers (device/cuda/
// device_utils.cuh, dialect.cuh, base/bf16.h), else the innermost; "" when none.
std::string site_name(const std::vector<std::string>& lines, const std::string& variant_source);

// The worst sites of a configuration: those with sectors or wavefronts beyond the
// ideal, most excess first, at most n.
std::vector<const SiteCount*> worst_sites(const Counters& c, std::size_t n);

nlohmann::json to_json(const Counters& c);
// Throws UsageError naming `where` and what is wrong.
Counters counters_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace wb
