#include "workbench/runtime/predict.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/errors.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/problem.h"

namespace wb {

const std::vector<ModelConstants::Named>& ModelConstants::all() {
  static const std::vector<Named> named{
      {"launch_s", &ModelConstants::launch_s},
      {"wave_s", &ModelConstants::wave_s},
      {"load_s", &ModelConstants::load_s},
      {"hit_s", &ModelConstants::hit_s},
      {"store_s", &ModelConstants::store_s},
      {"sector_clocks", &ModelConstants::sector_clocks},
      {"wavefront_clocks", &ModelConstants::wavefront_clocks},
      {"collective_clocks", &ModelConstants::collective_clocks},
      {"dram_efficiency", &ModelConstants::dram_efficiency},
      {"l2_efficiency", &ModelConstants::l2_efficiency},
      {"same_sector_s", &ModelConstants::same_sector_s},
      {"block_s", &ModelConstants::block_s},
      {"library_efficiency", &ModelConstants::library_efficiency, false},
      {"library_wave_s", &ModelConstants::library_wave_s},
  };
  return named;
}

namespace {

// The blocks one SM holds of kernel k at the device's compute capability: its
// theoretical occupancy's, or as many as the SM's warps and blocks allow where the table
// does not know the kernel (a build without nvcc).
double resident_blocks(const KernelCount& k, const DeviceModel& d, double warps_per_block) {
  for (const Occupancy& o : k.occupancy)
    if (o.compute_capability == d.compute_capability) return std::max(1, o.blocks_per_sm);
  return std::max(1.0, std::min(double(d.max_blocks_per_sm), std::floor(d.max_warps_per_sm / warps_per_block)));
}

struct Term {
  const char* name;
  double seconds;
};

// One kernel's time over its launches (predict.h states every term), and its largest term.
Term kernel_time(const KernelCount& k, const DeviceModel& d, const ModelConstants& m) {
  uint64_t loads = 0, stores = 0, sectors = 0, stored_sectors = 0, wavefronts = 0, collectives = 0;
  for (const SiteCount& s : k.sites) {
    if (s.collective) {
      collectives += s.requests;
    } else if (s.shared) {
      wavefronts += s.wavefronts;
    } else {
      sectors += s.sectors;
      (s.store ? stores : loads) += s.requests;
      if (s.store) stored_sectors += s.sectors;
    }
  }
  const double launches = double(std::max<uint64_t>(k.launches, 1));
  const double warps = double(std::max<uint64_t>(k.warps, 1));
  const double blocks = double(k.blocks) / launches;  // per launch
  const double warps_per_block = std::ceil(k.threads / 32.0);
  const double resident = resident_blocks(k, d, warps_per_block);
  const double sms = double(std::max(d.sms, 1));
  const double waves = std::ceil(blocks / (sms * resident));
  const double n = std::min(resident, std::ceil(blocks / sms)) * warps_per_block;
  // The share of a warp's loads that miss its SM's L1: its own distinct sectors over the
  // sectors it reads (per_warp sums those over the warps). Counters without a footprint
  // (made by hand, or of nothing read) take every load as a miss.
  const double read_sectors = double(sectors - stored_sectors);
  const double own = double(k.read_footprint.per_warp);
  const double miss = own > 0 && read_sectors > 0 ? std::min(1.0, own / read_sectors) : 1.0;
  const double chain =
      m.wave_s + double(loads) / warps * (miss * m.load_s + (1 - miss) * m.hit_s) + double(stores) / warps * m.store_s;
  const double issue = n *
                       (double(sectors) / warps * m.sector_clocks + double(wavefronts) / warps * m.wavefront_clocks +
                        double(collectives) / warps * m.collective_clocks) /
                       d.clock_hz;
  const double copy = d.ceilings.copy_gbps * 1e9 * m.dram_efficiency;
  const double l2 = d.l2_gbps * 1e9 * m.l2_efficiency;
  const double distinct = (k.distinct_sectors(false) + k.distinct_sectors(true)) * 32;
  // What the SMs' L1s ask of the L2: each warp's own distinct sectors read (per_warp,
  // scaled to every warp with the counts), every sector stored.
  const double to_l2 = (double(k.read_footprint.per_warp) + double(stored_sectors)) * 32;
  const double atomic_sectors = k.distinct_atomic_sectors();
  // A warp's chain and its SM's pipes overlap in part: their quadratic sum.
  Term top{chain >= issue ? "chain" : "issue", waves * std::hypot(chain, issue)};
  for (const Term& t :
       {Term{"dram", copy > 0 ? distinct / copy / launches : 0}, Term{"l2", l2 > 0 ? to_l2 / l2 / launches : 0},
        Term{"atomics",
             atomic_sectors > 0 ? double(k.atomic_sector_ops) / atomic_sectors * m.same_sector_s / launches : 0},
        Term{"blocks", std::ceil(blocks / sms) * m.block_s}})
    if (t.seconds > top.seconds) top = t;
  return {top.name, launches * top.seconds};
}

// The library's output tile along one of C's extents: kLibraryTile, or the extent
// rounded up to a multiple of 32 where it is shorter (a library picks a narrower tile
// for a narrow matrix rather than leave most of a wide one empty).
double library_tile(int64_t extent) {
  return extent >= kLibraryTile ? double(kLibraryTile) : 32.0 * std::ceil(double(extent) / 32.0);
}

// A library GEMM's calls on the device's SMs (predict.h): waves of tiles, each wave the
// time of its deepest tile at the rate the ceiling's square GEMM implies, plus the
// wave's fixed cost.
double gemm_seconds(const KernelCount::Gemm& g, double matmul, const DeviceModel& d, const ModelConstants& m) {
  const double sms = double(std::max(d.sms, 1));
  const double n = double(kCeilingGemmN);
  const double reference_waves = std::ceil(std::pow(n / kLibraryTile, 2) / sms);
  // Seconds per unit of depth of a wave of full tiles: the ceiling's GEMM, less its
  // waves' fixed costs, over its depth (at least half of its time is arithmetic).
  const double reference = 2 * n * n * n / matmul;
  const double per_depth =
      std::max(reference / 2, reference - reference_waves * m.library_wave_s) / (reference_waves * n);
  const double tm = library_tile(g.m), tn = library_tile(g.n);
  const double tiles = double(g.batch) * std::ceil(double(g.m) / tm) * std::ceil(double(g.n) / tn);
  const double area = tm * tn / (double(kLibraryTile) * kLibraryTile);
  // Split along k where that fills the SMs better (a deep GEMM of few tiles: the
  // classifier's backward), each split at least kMinSplitDepth deep; the partial sums'
  // reduction is not counted.
  double best = 0;
  for (int split = 1; split <= kMaxSplit; split *= 2) {
    if (split > 1 && double(g.k) / split < kMinSplitDepth) break;
    const double waves = std::ceil(tiles * split / sms);
    const double t = waves * (area * std::ceil(double(g.k) / split) * per_depth + m.library_wave_s);
    if (split == 1 || t < best) best = t;
  }
  return double(g.calls) * best;
}

}  // namespace

NumericClass library_class(const OpSpec& op, NumericClass numeric) {
  const bool bf16_inputs = std::any_of(op.tensors.begin(), op.tensors.end(), [](const TensorSpec& t) {
    return t.role == Role::input && t.dtype == DType::bf16;
  });
  return bf16_inputs ? NumericClass::bf16 : numeric;
}

Prediction predict_time(const std::optional<Counters>& counters, double model_bytes, double model_flops,
                        NumericClass numeric, NumericClass library_numeric, const DeviceModel& d,
                        const ModelConstants& m) {
  const double copy = d.ceilings.copy_gbps * 1e9;
  auto ceiling = [&](NumericClass c) {  // a class without a ceiling measured: the fp32 one
    return d.ceilings.matmul_tflops(c) > 0 ? d.ceilings.matmul_tflops(c) * 1e12 : d.ceilings.fp32_tflops * 1e12;
  };
  const double matmul = ceiling(numeric), library_matmul = ceiling(library_numeric);
  auto library = [&](double flops, double bytes) {
    return std::max(library_matmul > 0 ? flops / library_matmul : 0, copy > 0 ? bytes / copy : 0) /
           m.library_efficiency;
  };
  Prediction p;
  if (!counters) {
    p.seconds = m.launch_s + library(model_flops, model_bytes);
    p.bound = "model";
    return p;
  }
  p.launches = 0;
  double kernels = 0, calls = 0, costliest = -1;
  bool calls_library = false;  // then the op's flops are the library's: the floor is at its ceiling
  for (const KernelCount& k : counters->kernels) {
    calls_library = calls_library || k.library;
    p.launches += k.launches;
    if (k.library && !k.gemms.empty() && library_matmul > 0) {  // tiles and waves at the problem's shape
      double arithmetic = 0;
      for (const KernelCount::Gemm& g : k.gemms) arithmetic += gemm_seconds(g, library_matmul, d, m);
      calls += std::max(arithmetic, copy > 0 ? k.bytes / copy : 0) / m.library_efficiency;
      continue;
    }
    if (k.library) {  // a call without its problem's shape (cuDNN's SDPA; counts made before wb.predict/3)
      calls += double(k.launches) * library(k.flops / double(std::max<uint64_t>(k.launches, 1)),
                                            k.bytes / double(std::max<uint64_t>(k.launches, 1)));
      continue;
    }
    const Term t = kernel_time(k, d, m);
    kernels += t.seconds;
    if (t.seconds > costliest) costliest = t.seconds, p.bound = t.name;
  }
  if (calls > costliest) p.bound = "library";
  double work = kernels + calls;
  const double floor_matmul = calls_library ? library_matmul : matmul;
  if (floor_matmul > 0 && model_flops / floor_matmul > work) work = model_flops / floor_matmul, p.bound = "flops";
  p.seconds = double(p.launches) * m.launch_s + work;
  return p;
}

Prediction predict_time(const std::optional<Counters>& counters, double model_bytes, double model_flops,
                        NumericClass numeric, const OpSpec& op, const DeviceModel& d, const ModelConstants& m) {
  return predict_time(counters, model_bytes, model_flops, numeric, library_class(op, numeric), d, m);
}

double as_graph_node(const Prediction& p, const ModelConstants& m) {
  return p.seconds - double(p.launches) * (m.launch_s - kGraphNodeSeconds);
}

nlohmann::json to_json(const ModelConstants& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const ModelConstants::Named& c : ModelConstants::all()) j[c.name] = m.*c.value;
  return j;
}

ModelConstants constants_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw UsageError(origin + ": the constants are not an object");
  ModelConstants m;
  for (const ModelConstants::Named& c : ModelConstants::all()) {
    const auto v = j.find(c.name);
    if (v == j.end() || !v->is_number() || !(v->get<double>() >= 0))
      throw UsageError(origin + ": no number >= 0 for " + c.name);
    m.*c.value = v->get<double>();
  }
  return m;
}

CountingSession::CountingSession(const Registry& registry, const OpSpec& op, const Shape& shape, uint64_t seed,
                                 Executor& emu)
    : op_(op), shape_(shape), seed_(seed), emu_(emu), host_(op, shape), device_(emu, op, shape) {
  fill_inputs(host_, seed, registry);
}

Counters count_sampled_or_whole(uint64_t sample_blocks, const std::function<Counters(uint64_t)>& count,
                                const std::function<void()>& lose, std::string* note) {
  try {
    return count(sample_blocks);
  } catch (const BackendError& e) {
    if (sample_blocks == 0) throw;
    lose();
    Counters whole = count(0);
    if (note)
      *note =
          "counted at every block: with sampled blocks it faulted (" + std::string(e.what()).substr(0, 160) + "...)";
    return whole;
  }
}

Counters CountingSession::count(const Variant& v, const ParamValues& params, uint64_t sample_blocks) {
  for (std::size_t i = 0; i < op_.tensors.size(); ++i)  // inouts as they began, outputs untouched
    if (op_.tensors[i].role != Role::output)
      emu_.to_device(device_.buffers[i].data(), host_.buffers[i].data(), device_.buffers[i].bytes());
  Buffer workspace(emu_, v.workspace_bytes(shape_, params));
  Launch launch;
  launch.params = params;
  launch.workspace = workspace.data();
  launch.workspace_bytes = workspace.bytes();
  launch.ctx = emu_.context();
  emu_.set_counting(true, sample_blocks, sample_blocks > 0);
  emu_.take_counters("");
  emu_.begin_run(0, seed_);
  op_.invoke(v, device_.table(), launch);
  emu_.synchronize();
  std::optional<Counters> counted = emu_.take_counters(v.source);
  emu_.set_counting(false, 0);
  return counted ? counted->scaled_to_every_block() : Counters{};
}

double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = a.size();
  if (n < 2 || b.size() != n) return 0;
  auto ranks = [n](const std::vector<double>& x) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return x[i] < x[j]; });
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n;) {
      std::size_t j = i;
      while (j + 1 < n && x[order[j + 1]] == x[order[i]]) ++j;
      for (std::size_t k = i; k <= j; ++k) r[order[k]] = (double(i) + double(j)) / 2 + 1;
      i = j + 1;
    }
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double mean = (double(n) + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

}  // namespace wb
