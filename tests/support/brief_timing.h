#pragma once
// Timing options for the tests that need a measurement to happen, not a good one.
#include "workbench/runtime/timing.h"

namespace wb::testing {

// `repetitions` of at least `min_time_s` each, with no warm-up.
inline TimingOptions brief_timing(int repetitions, double min_time_s = 0.001) {
  TimingOptions o;
  o.repetitions = repetitions;
  o.min_time_s = min_time_s;
  o.warmup_s = 0;
  return o;
}

}  // namespace wb::testing
