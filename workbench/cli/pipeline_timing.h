#pragma once
// The timing engine of the pipeline (wb run and wb sweep): Google Benchmark runs the
// launches. On cuda every launch is timed by CUDA events (manual time) after an L2
// flush; on cpu by the wall clock around each launch after a flush of the last-level
// cache (at most 32 launches per repetition, a flush costing milliseconds), or with
// --no-flush by the wall clock over back-to-back launches (warm caches). Each
// repetition gives one mean time per launch; the statistics are over the repetitions.
#include <functional>
#include <string>

#include "workbench/runtime/executor.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/timing.h"

namespace wb {

// Runs `launch` under Google Benchmark; throws what the launch threw. With `own_time`
// (a PyTorch rung, timed in its own process: workbench/runtime/torch_rung.h) each timed
// launch is own_time(), which returns the seconds the work took, measured around the
// work alone where it ran (the round trip to that process is not the rung's); the cache
// is flushed here before each as for any launch.
TimingStats measure(Executor& ex, const std::function<void()>& launch, const TimingOptions& options,
                    const std::string& name, const std::function<double()>& own_time = {});

}  // namespace wb

namespace wb::cli {

// The timer of EvalOptions: Google Benchmark on this executor with these options.
Timer timer_for(Executor& ex, const TimingOptions& options);

}  // namespace wb::cli
