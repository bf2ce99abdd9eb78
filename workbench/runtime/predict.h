#pragma once
// A predicted time for a CUDA variant's configuration on a device, from the emulator's
// counters (workbench/runtime/counters.h) and the device's measured ceilings: `wb
// predict` holds it against a device's measured sweep (docs/counters.md). The model is
// an analytical one, each term a line of predict_time, stated in full here (per kernel
// and launch; B blocks of W warps, R of them resident on an SM, S SMs):
//
//   waves    = ceil(B / (S x R))                    (the last one may be partial: a tail)
//   n        = min(R, ceil(B / S)) x W              warps an SM holds in a wave
//   chain    = wave_s + loads x (miss x load_s + (1 - miss) x hit_s) + stores x store_s
//              (a warp's requests, in turn; miss: the share of the sectors a warp reads that
//              it had not read before, its own distinct sectors over those it requests; the
//              rest hit in its SM's L1)
//   issue    = n x (sectors x sector_clocks + wavefronts x wavefront_clocks
//                   + collectives x collective_clocks) / clock     (an SM's pipes, its warps')
//   t_sm     = waves x sqrt(chain^2 + issue^2)     (either can hide the other only in part)
//   t_dram   = distinct bytes / (copy ceiling x dram_efficiency)   (each sector once: the rest
//              hits in L1 or L2; the emulator's addresses say which are distinct)
//   t_l2     = (each warp's own distinct sectors read + sectors stored) x 32
//              / (the L2's bandwidth x l2_efficiency)   (a warp's reads of a sector it read
//              before hit in its SM's L1; stores go through to the L2)
//   t_atomic = atomic sector operations / their distinct sectors x same_sector_s   (an L2
//              atomic unit serves a request's lanes on one sector at once, one request
//              on a sector after another)
//   t_blocks = ceil(B / S) x block_s                    (an SM starts its blocks one by one)
//   t_k      = max(t_sm, t_dram, t_l2, t_atomic, t_blocks)
//
//   t = launches x launch_s + max(sum over kernels of t_k + library calls,
//                                 the op's flop model / the matrix ceiling of its class,
//                                 or of library_class where the rung calls a library)
//   a library's matrix ceiling is library_class's: bf16 for an op on bf16 storage
//   a library GEMM (cuBLAS, emulated; C m x n, k deep, `batch` of them), its calls together:
//     tiles    = batch x ceil(m / tm) x ceil(n / tn)   (tm, tn: 128, or a shorter extent
//                                                        rounded up to 32)
//     waves    = ceil(tiles x split / S)
//     wave     = (tm x tn / 128^2) x (k / split) x per_depth + library_wave_s
//     split    = 1, 2, 4 .. 16 (k / split at least 256), whichever takes least time
//     per_depth: the matrix ceiling's square GEMM (n = 8192: 2 n^3 flops in 4096 tiles,
//                ceil(4096 / S) waves) less its waves' fixed costs, over its waves and depth
//     t_lib    = max(sum of waves x wave, bytes / copy ceiling) / library_efficiency
//   (a library call without its shape: max(flops / matrix ceiling, bytes / copy ceiling)
//    / library_efficiency)
//
// loads, stores, sectors, wavefronts and collectives are per warp (the counters over the
// kernel's warps). A variant the emulator cannot run (cuBLASLt, cuDNN's softmax) is
// predicted as one library call at the op's byte and flop models. The constants have a stated prior
// (ModelConstants' defaults, set before any fit) and are fitted to a device's measured
// sweep by fit_constants, scored leave-one-op-out (predict_score.h). What the model does
// not see (CUDA-core arithmetic beyond the op's flop model, instruction dependencies,
// caches other than by distinct sectors) is listed with its scores in docs/counters.md.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "contract/registry.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/ceilings.h"
#include "workbench/runtime/counters.h"
#include "workbench/runtime/executor.h"

namespace wb {

// A node of a replayed CUDA graph in place of a launch's floor: ~0.5-0.6 us per node on
// Hopper (published replay figures; not yet measured by wb).
inline constexpr double kGraphNodeSeconds = 5.5e-7;
// The model's version: what a committed prediction names (docs/formats.md,
// wb.predictions/1). Any change to a term makes a new one; the constants a prediction
// used travel with it. /7: a warp's loads of sectors it read before cost an L1 hit in
// its chain (hit_s), and fits shrink toward the prior (predict_score.h); /6: a
// library's matrix ceiling is library_class's (bf16 for an op on bf16 storage).
inline constexpr const char* kPredictModel = "wb.predict/7";
// What wb predict --format json writes: the counts, reused with --counts. /2: up to 4
// warps of a sampled block counted, atomics by sector (/1: two warps, by address).
inline constexpr const char* kPredictCountsSchema = "wb.predict-counts/2";
// A library GEMM's output tile (128 x 128, the common choice of cuBLAS for large
// problems; not the library's actual heuristic, which is not public) and the size of the
// square GEMM the matrix ceilings are measured at (cuda_executor.cpp).
inline constexpr int kLibraryTile = 128;
inline constexpr int kCeilingGemmN = 8192;
// A deep GEMM of few tiles is split along k (split-K) into up to kMaxSplit parts of at
// least kMinSplitDepth each, where that takes less time: what libraries do for such shapes.
inline constexpr int kMaxSplit = 16;
inline constexpr int kMinSplitDepth = 256;

// The model's constants. The defaults are the prior: set from published Hopper figures
// and first principles before any fit (the fitted ones are printed by wb predict).
struct ModelConstants {
  double launch_s = 2e-6;        // a launch's floor on a busy stream
  double wave_s = 1e-6;          // a wave's fixed cost: its blocks started, a first load's latency
  double load_s = 1e-7;          // a warp's global load after the one before it (pipelined)
  double hit_s = 2e-8;           // a load of sectors the warp read before: an L1 hit (~40 clocks, docs/counters.md)
  double store_s = 1e-7;         // a warp's global store after the one before it
  double sector_clocks = 1;      // an SM's clocks per global sector requested (L1's tag stage)
  double wavefront_clocks = 1;   // per shared-memory wavefront
  double collective_clocks = 1;  // per warp collective (shuffle, vote, mma.sync, ldmatrix)
  double dram_efficiency = 0.9;  // of the copy ceiling that a kernel's distinct bytes reach
  double l2_efficiency = 0.5;    // of the L2's bandwidth that requested sectors reach
  double same_sector_s = 2e-8;   // an atomic request on a sector right after another on it
  double block_s = 1e-7;         // an SM's start of a block after the one before (~200 clocks)
  // Of the ceilings a library call reaches beyond its tiles and waves. Held at 1, never
  // fitted: the matrix ceilings are the library's own square GEMM, so what a library GEMM
  // falls short of them by is its tiles, waves and their fixed costs, which the library
  // term models; and the only library calls a sweep timed (the attention ops') cannot tell
  // an efficiency from a wave's cost (any pair from 0.66 with no wave cost to 1.13 with
  // 8 us fits them alike).
  double library_efficiency = 1;
  double library_wave_s = 2e-6;  // a library GEMM wave's fixed cost: its tiles' C written, their first loads

  struct Named {
    const char* name;
    double ModelConstants::*value;
    bool fitted = true;  // false: held at its prior (or --set), never fitted
  };
  static const std::vector<Named>& all();  // every constant, by name: those fitted are what a fit varies
};

struct Prediction {
  double seconds = 0;
  uint64_t launches = 1;  // what the launch floor was paid for (1 for a library rung: not counted)
  // What bounds it: the costliest kernel's largest term ("chain", "issue", "dram", "l2",
  // "atomics", "blocks"), "library" where library calls cost most, "flops" where the op's flop
  // model does; "model" for a variant the emulator cannot run.
  std::string bound;
};

// What the device offers the model: SMs, clock and compute capability from its report,
// the ceilings it measured, and the figures no report measures (L2, the SM's limits, the
// issue rates), from the device's description (results/devices/<slug>.json) or, for a
// report of a device without one, the defaults below (Hopper's).
struct IssueRates {      // warp instructions an SM issues a clock, per kind (published figures)
  double shuffle = 1;    // shfl, vote, __syncwarp, redux: 32 lanes a clock
  double mma = 0.5;      // mma.sync m16n8k16 (bf16 in, fp32 accumulate)
  double ldmatrix = 1;   // ldmatrix .x4: 512 bytes of shared memory
  double special = 0.5;  // MUFU (exp2, rsqrt, tanh): 16 lanes a clock
};

struct DeviceModel {
  std::string name;  // "NVIDIA H200"
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

// The class whose matrix ceiling a library's work reaches for a variant of `op` of
// class `numeric`: bf16 where the op's inputs are stored in bf16 (cuBLAS's GemmEx,
// cuBLASLt and cuDNN run bf16 tensor cores on them, whatever the rung's accuracy class,
// which is fp32 where the products accumulate in fp32), else `numeric`. Until model 6
// the rung's class was taken: the bf16 GEMM rungs were predicted at the fp32 CUDA-core
// ceiling (51 TFLOP/s on the H200 against 778).
NumericClass library_class(const OpSpec& op, NumericClass numeric);

// counters: the configuration's, scaled to every block; nullopt for a variant the
// emulator cannot run. numeric: the rung's class (the ceiling under the op's flop
// model); library: library_class's (the ceiling of its library calls, and of a rung
// the emulator cannot run).
Prediction predict_time(const std::optional<Counters>& counters, double model_bytes, double model_flops,
                        NumericClass numeric, NumericClass library, const DeviceModel& device,
                        const ModelConstants& constants = {});

// The same for a variant of `op`: its library calls at library_class(op, numeric). What
// a caller with the op in hand calls, so that the rule stays in library_class alone.
Prediction predict_time(const std::optional<Counters>& counters, double model_bytes, double model_flops,
                        NumericClass numeric, const OpSpec& op, const DeviceModel& device,
                        const ModelConstants& constants = {});

// A prediction's time replayed as a node of a CUDA graph: the floor of each of its
// launches replaced by a node's.
double as_graph_node(const Prediction& p, const ModelConstants& m);

// The constants by name: what a predictions or scores file records of the model.
nlohmann::json to_json(const ModelConstants& m);
// Its inverse: every constant by name, a number >= 0; UsageError naming `origin` and the
// constant otherwise.
ModelConstants constants_from_json(const nlohmann::json& j, const std::string& origin);

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
  const OpSpec& op() const { return op_; }

 private:
  const OpSpec& op_;
  Shape shape_;
  uint64_t seed_;
  Executor& emu_;
  HostTensors host_;
  ExecutorTensors device_;
};

// `count(sample_blocks)`, or where only the sampled blocks ran and that faulted (a later
// kernel read what the blocks that did not run would have written: encoder_backward's
// token runs), `lose()` (the device is lost: a fresh emulated one) and `count(0)`, every
// block; a fault then is the variant's own. `note`, when given, says which.
Counters count_sampled_or_whole(uint64_t sample_blocks, const std::function<Counters(uint64_t)>& count,
                                const std::function<void()>& lose, std::string* note = nullptr);

// Spearman's rank correlation of two equally long series (ties take their mean rank);
// 0 for fewer than two points.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace wb
