#pragma once
// A predicted time for a CUDA variant's configuration on a device, from the emulator's
// counters (workbench/runtime/counters.h) and the device's measured ceilings: `wb
// predict` holds it against a device's measured sweep (docs/counters.md). The model is
// deliberately simple, with its constants chosen beforehand (not fitted to the sweep it
// is scored on), and stated in full here:
//
//   t = launches x kLaunchSeconds
//     + max( the op's byte model / the copy ceiling,             (DRAM: every byte once)
//            the op's flop model / the matrix ceiling of its class,
//            sum over the counted kernels of t_k
//            + the library calls' max(flops / matrix ceiling, bytes / copy ceiling) )
//   t_k = max( global sectors x 32 bytes x (1 / the copy ceiling + 1 / in_flight_k),
//              shared wavefronts / (active SMs x 1 a clock) )
//   in_flight_k = active SMs x warps per active SM x bytes per request
//                 x kRequestsInFlight / kLatencySeconds           (Little's law)
//   active SMs = min(SMs, blocks of a launch); warps per active SM = min(the theoretical
//   occupancy's warps, the launch's warps / active SMs)
//
// A variant the emulator cannot run (cuDNN, cuBLASLt) is predicted by the op's byte
// and flop models at the ceilings alone, as if it reached them. What the model misses
// (no caches: every sector comes from memory; no instruction issue or CUDA-core
// arithmetic beyond the op's flop model; no tail effects) is listed with its scores in
// docs/counters.md.
#include <cstdint>
#include <optional>
#include <string>

#include "contract/registry.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/ceilings.h"
#include "workbench/runtime/counters.h"
#include "workbench/runtime/executor.h"

namespace wb {

inline constexpr double kLaunchSeconds = 2e-6;   // a launch's floor on a busy stream
inline constexpr double kLatencySeconds = 5e-7;  // a global load's latency under load (~1000 clocks)
inline constexpr double kRequestsInFlight = 2;   // a warp's independent loads in flight
// A node of a replayed CUDA graph in place of a launch's floor: ~0.5-0.6 us per node on
// Hopper (published replay figures; not yet measured by wb).
inline constexpr double kGraphNodeSeconds = 5.5e-7;
// The model's version: what a committed prediction names (docs/formats.md,
// wb.predictions/1). Any change to a term or a constant above makes a new one.
inline constexpr const char* kPredictModel = "wb.predict/1";

struct Prediction {
  double seconds = 0;
  uint64_t launches = 1;  // what the launch floor was paid for (1 for a library rung: not counted)
  std::string bound;      // what the max picked: "dram", "flops", "l1", "shared", "library"; "model" for a library rung
};

// What the device offers the model: SMs, clock and compute capability from its report,
// the ceilings it measured, and the figures no report measures (L2, the SM's limits, the
// issue rates), from the device's description (results/devices/<slug>.json) or, for a
// report of a device without one, the defaults below (Hopper's).
struct IssueRates {  // warp instructions an SM issues a clock, per kind (published figures)
  double shuffle = 1;     // shfl, vote, __syncwarp, redux: 32 lanes a clock
  double mma = 0.5;       // mma.sync m16n8k16 (bf16 in, fp32 accumulate)
  double ldmatrix = 1;    // ldmatrix .x4: 512 bytes of shared memory
  double special = 0.5;   // MUFU (exp2, rsqrt, tanh): 16 lanes a clock
};

struct DeviceModel {
  std::string name;            // "NVIDIA H200"
  int sms = 0;
  double clock_hz = 0;
  int compute_capability = 0;  // 90 for 9.0: whose occupancy to take
  Ceilings ceilings;
  double l2_bytes = 60.0 * (1 << 20);  // L2's capacity
  double l2_gbps = 10000;              // L2 to the SMs, all of them (gpu-benches, 5-40 MB sets)
  int max_warps_per_sm = 64, max_blocks_per_sm = 32;
  IssueRates issue;
  std::string source;     // where the figures not in a report come from, in words
  bool measured = false;  // false: predicted, never scored against this device's times
};

// counters: the configuration's, scaled to every block; nullopt for a variant the
// emulator cannot run.
Prediction predict_time(const std::optional<Counters>& counters, double model_bytes, double model_flops,
                        NumericClass numeric, const DeviceModel& device);

// One op at one shape on the emulator, its inputs made once (as a check makes them)
// for every configuration counted on it.
class CountingSession {
 public:
  CountingSession(const Registry& registry, const OpSpec& op, const Shape& shape, uint64_t seed, Executor& emu);
  // The emulated twin of a CUDA variant run once to count it: every launch counting
  // `sample_blocks` blocks (0: every block), and with sample_blocks > 0 only those blocks
  // run, so that the trainer's shapes are affordable; the outputs are not validated.
  // The counters come back scaled to every block.
  Counters count(const Variant& emu_variant, const ParamValues& params, uint64_t sample_blocks);

 private:
  const OpSpec& op_;
  Shape shape_;
  uint64_t seed_;
  Executor& emu_;
  HostTensors host_;
  ExecutorTensors device_;
};

// Spearman's rank correlation of two equally long series (ties take their mean rank);
// 0 for fewer than two points.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace wb
