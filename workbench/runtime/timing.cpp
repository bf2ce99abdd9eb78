#include "workbench/runtime/timing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace wb {

TimingOptions TimingOptions::resolved(Backend b) const {
  TimingOptions o = *this;
  const bool cuda = b == Backend::cuda;
  if (o.repetitions <= 0) o.repetitions = cuda ? 20 : 5;
  if (o.min_time_s <= 0) o.min_time_s = cuda ? 0.01 : 0.05;
  if (o.warmup_s < 0) o.warmup_s = cuda ? 0.05 : 0.02;
  return o;
}

TimingStats summarize(std::vector<double> samples, int64_t iterations) {
  TimingStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.repetitions = int(n);
  s.iterations = iterations;
  s.min_s = samples.front();
  s.median_s = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.mean_s = std::accumulate(samples.begin(), samples.end(), 0.0) / double(n);
  double ss = 0;
  for (double x : samples) ss += (x - s.mean_s) * (x - s.mean_s);
  s.stddev_s = n > 1 ? std::sqrt(ss / double(n - 1)) : 0.0;
  s.cv = s.mean_s > 0 ? s.stddev_s / s.mean_s : 0.0;
  return s;
}

}  // namespace wb
