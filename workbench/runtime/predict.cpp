#include "workbench/runtime/predict.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "workbench/runtime/buffers.h"
#include "workbench/runtime/problem.h"

namespace wb {

namespace {

// The warps one SM holds of kernel k at the device's compute capability: its
// theoretical occupancy's, or the SM's most where the table does not know it.
double occupancy_warps(const KernelCount& k, int cc) {
  for (const Occupancy& o : k.occupancy)
    if (o.compute_capability == cc) return o.warps_per_sm;
  return 64;
}

}  // namespace

Prediction predict_time(const std::optional<Counters>& counters, double model_bytes, double model_flops,
                        NumericClass numeric, const DeviceModel& d) {
  const double copy = d.ceilings.copy_gbps * 1e9;
  const double matmul = d.ceilings.matmul_tflops(numeric) > 0 ? d.ceilings.matmul_tflops(numeric) * 1e12
                                                               : d.ceilings.fp32_tflops * 1e12;
  Prediction p;
  struct Part {
    const char* name;
    double seconds;
  };
  std::vector<Part> parts{{"dram", copy > 0 ? model_bytes / copy : 0}, {"flops", matmul > 0 ? model_flops / matmul : 0}};
  uint64_t launches = 1;
  if (counters) {
    launches = 0;
    double kernels = 0, library = 0, memory = 0, banks = 0;
    for (const KernelCount& k : counters->kernels) {
      launches += k.launches;
      if (k.library) {
        library += std::max(matmul > 0 ? k.flops / matmul : 0, copy > 0 ? k.bytes / copy : 0);
        continue;
      }
      uint64_t sectors = 0, requests = 0, wavefronts = 0;
      for (const SiteCount& s : k.sites) {
        if (s.collective) continue;
        if (s.shared) {
          wavefronts += s.wavefronts;
        } else {
          sectors += s.sectors;
          requests += s.requests;
        }
      }
      // Per launch (launches of one kernel run one after another).
      const double n = double(std::max<uint64_t>(k.launches, 1));
      const double blocks = double(k.blocks) / n;
      const double active = std::max(1.0, std::min(double(d.sms), blocks));
      const double warps =
          std::min(occupancy_warps(k, d.compute_capability), blocks * std::ceil(k.threads / 32.0) / active);
      const double bytes_per_request = requests ? double(sectors) * 32 / double(requests) : 0;
      // Each byte pays for the copy bandwidth and for its share of the latency: a
      // harmonic mean rather than the lower of the two, so that more bytes in flight
      // still help near the ceiling, as queueing makes them.
      const double in_flight = active * warps * bytes_per_request * kRequestsInFlight / kLatencySeconds;
      const double t_memory = in_flight > 0 && copy > 0 ? double(sectors) * 32 * (1 / copy + 1 / in_flight) : 0;
      const double t_banks = double(wavefronts) / (active * d.clock_hz);
      kernels += std::max(t_memory, t_banks);
      memory += t_memory;
      banks += t_banks;
    }
    const char* kernel_bound = banks > memory ? "shared" : "memory";
    parts.push_back({library > kernels ? "library" : kernel_bound, kernels + library});
  } else {
    p.bound = "model";
  }
  const Part* top = &parts.front();
  for (const Part& part : parts)
    if (part.seconds > top->seconds) top = &part;
  p.seconds = double(launches) * kLaunchSeconds + top->seconds;
  p.launches = launches;
  if (p.bound.empty()) p.bound = top->name;
  return p;
}

CountingSession::CountingSession(const Registry& registry, const OpSpec& op, const Shape& shape, uint64_t seed,
                                 Executor& emu)
    : op_(op), shape_(shape), seed_(seed), emu_(emu), host_(op, shape), device_(emu, op, shape) {
  fill_inputs(host_, seed, registry);
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
