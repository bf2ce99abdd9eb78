#pragma once
// What timing is asked for and what it found: the options of a timed run and the
// statistics over its repetitions (each repetition gives one mean time per launch).
// The timing engine itself (Google Benchmark) belongs to the wb program
// (workbench/cli/pipeline_timing.h); the runtime only carries its results.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "contract/types.h"

namespace wb {

struct TimingOptions {
  int repetitions = 0;    // 0: the backend's default (cuda 20, cpu 5)
  double min_time_s = 0;  // per repetition; 0: the backend's default (cuda 0.01, cpu 0.05)
  double warmup_s = -1;   // before the first repetition; <0: the backend's default (cuda 0.05, cpu 0.02)
  // Flush the last-level cache (a GPU's L2, a CPU's LLC) before every timed launch, as a
  // training step's working set, far larger than the cache, leaves it for the next op.
  bool flush_cache = true;
  std::size_t flush_bytes = 0;  // what a flush writes (set from the executor; 0: unknown)

  TimingOptions resolved(Backend b) const;  // defaults filled in
};

struct TimingStats {
  double median_s = 0, min_s = 0, mean_s = 0, stddev_s = 0;
  double cv = 0;  // stddev / mean
  int repetitions = 0;
  int64_t iterations = 0;  // launches per repetition
};

// Statistics of per-launch times (seconds), one per repetition.
TimingStats summarize(std::vector<double> samples, int64_t iterations);

}  // namespace wb
