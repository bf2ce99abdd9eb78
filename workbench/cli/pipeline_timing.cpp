#include "workbench/cli/pipeline_timing.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

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

TimingStats measure(Executor& ex, const std::function<void()>& launch, const TimingOptions& options,
                    const std::string& name, const std::function<double()>& own_time) {
  initialize_once();
  const TimingOptions o = options.resolved(ex.backend());
  std::string failure;
  // CUDA launches are timed by events; flushed CPU launches by the wall clock around the
  // launch alone (the flush is not timed); warm CPU launches by Google Benchmark's clock.
  const bool manual = ex.backend() == Backend::cuda || o.flush_cache || own_time;
  const auto time_one = [&] { return own_time ? own_time() : ex.time_launch(launch); };
  auto body = [&](benchmark::State& state) {
    try {
      if (manual) {
        for (auto _ : state) {
          if (o.flush_cache) ex.flush_cache();
          state.SetIterationTime(time_one());
        }
      } else {
        for (auto _ : state) launch();  // (own_time is manual)
      }
    } catch (const std::exception& e) {
      failure = e.what();
      state.SkipWithError("the launch failed");
    }
  };
  // A CPU flush costs milliseconds, far more than a small op: a fixed number of launches
  // per repetition, enough for min_time by a flushed launch's time, at most 32. (Google
  // Benchmark takes no warm-up with a fixed count: the warm-up launches run here, before
  // anything is registered: a launch that throws leaves no benchmark behind.)
  const bool fixed_count = ex.backend() != Backend::cuda && o.flush_cache;
  benchmark::IterationCount count = 0;
  if (fixed_count) {
    double once = 0;
    const auto start = std::chrono::steady_clock::now();
    do {  // flushes included: the warm-up is bounded in wall time
      ex.flush_cache();
      once = time_one();
    } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < o.warmup_s);
    count = benchmark::IterationCount(std::clamp(std::ceil(o.min_time_s / std::max(once, 1e-7)), 1.0, 32.0));
  }
  // The registered benchmark refers to this call's locals: it is unregistered on every
  // way out, or the next measure() would run it too, on dangling references.
  struct Unregister {
    ~Unregister() { benchmark::ClearRegisteredBenchmarks(); }
  } unregister;
  benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(name.c_str(), body);
  if (manual) {
    b->UseManualTime();
  } else {
    b->UseRealTime();
  }
  b->Repetitions(o.repetitions)->Unit(benchmark::kMicrosecond);
  if (fixed_count) {
    b->Iterations(count);
  } else {
    b->MinTime(o.min_time_s)->MinWarmUpTime(o.warmup_s);
  }
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  if (!failure.empty()) throw std::runtime_error(failure);
  if (!collector.error.empty()) throw std::runtime_error("timing failed: " + collector.error);
  if (collector.samples.empty()) throw std::runtime_error("timing produced no measurements");
  return summarize(collector.samples, collector.iterations);
}

}  // namespace wb

namespace wb::cli {

Timer timer_for(Executor& ex, const TimingOptions& options) {
  return
      [&ex, options](const std::function<void()>& launch, const std::string& name,
                     const std::function<double()>& own_time) { return measure(ex, launch, options, name, own_time); };
}

}  // namespace wb::cli
