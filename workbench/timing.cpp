#include "workbench/timing.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "workbench/executor.h"

namespace wb {
namespace {

// Keeps the per-repetition runs of one benchmark; prints nothing.
class Collector final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;
      if (r.error_occurred) {
        error = r.error_message;
        continue;
      }
      samples.push_back(r.real_accumulated_time / double(r.iterations));
      iterations = r.iterations;
    }
  }
  std::vector<double> samples;
  int64_t iterations = 0;
  std::string error;
};

void initialize_once() {
  static bool done = [] {
    int argc = 1;
    char name[] = "wb";
    char* argv[] = {name, nullptr};
    benchmark::Initialize(&argc, argv);
    return true;
  }();
  (void)done;
}

}  // namespace

TimingOptions TimingOptions::resolved(Backend b) const {
  TimingOptions o = *this;
  const bool cuda = b == Backend::cuda;
  if (o.repetitions <= 0) o.repetitions = cuda ? 20 : 5;
  if (o.min_time_s <= 0) o.min_time_s = cuda ? 0.01 : 0.05;
  if (o.warmup_s < 0) o.warmup_s = cuda ? 0.05 : 0.02;
  if (!cuda) o.flush_l2 = false;
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

TimingStats measure(Executor& ex, const std::function<void()>& launch, const TimingOptions& options,
                    const std::string& name) {
  initialize_once();
  const TimingOptions o = options.resolved(ex.backend());
  std::string failure;
  auto body = [&](benchmark::State& state) {
    try {
      if (ex.backend() == Backend::cuda) {
        for (auto _ : state) {
          if (o.flush_l2) ex.flush_cache();
          state.SetIterationTime(ex.time_launch(launch));
        }
      } else {
        for (auto _ : state) launch();
      }
    } catch (const std::exception& e) {
      failure = e.what();
      state.SkipWithError("the launch failed");
    }
  };
  benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(name.c_str(), body);
  if (ex.backend() == Backend::cuda) {
    b->UseManualTime();
  } else {
    b->UseRealTime();
  }
  b->Repetitions(o.repetitions)->MinTime(o.min_time_s)->MinWarmUpTime(o.warmup_s)->Unit(benchmark::kMicrosecond);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  if (!failure.empty()) throw std::runtime_error(failure);
  if (!collector.error.empty()) throw std::runtime_error("timing failed: " + collector.error);
  if (collector.samples.empty()) throw std::runtime_error("timing produced no measurements");
  return summarize(collector.samples, collector.iterations);
}

}  // namespace wb
