#pragma once
// The timing engine: Google Benchmark runs the launches. On cuda every launch is timed
// by CUDA events (manual time) after an L2 flush; on cpu by the wall clock (real
// time). Each repetition gives one mean time per launch; statistics are over the
// repetitions.
#include <cstdint>
#include <functional>
#include <string>

#include "kernels/types.h"

namespace wb {

class Executor;

struct TimingOptions {
  int repetitions = 0;    // 0: the backend's default (cuda 20, cpu 5)
  double min_time_s = 0;  // per repetition; 0: the backend's default (cuda 0.01, cpu 0.05)
  double warmup_s = -1;   // before the first repetition; <0: the backend's default (cuda 0.05, cpu 0.02)
  bool flush_l2 = true;   // cuda only

  TimingOptions resolved(Backend b) const;  // defaults filled in
};

struct TimingStats {
  double median_s = 0, min_s = 0, mean_s = 0, stddev_s = 0;
  double cv = 0;  // stddev / mean
  int repetitions = 0;
  int64_t iterations = 0;  // launches per repetition
};

// Runs `launch` under Google Benchmark; throws what the launch threw.
TimingStats measure(Executor& ex, const std::function<void()>& launch, const TimingOptions& options,
                    const std::string& name);

// Statistics of per-launch times (seconds), one per repetition.
TimingStats summarize(std::vector<double> samples, int64_t iterations);

}  // namespace wb
