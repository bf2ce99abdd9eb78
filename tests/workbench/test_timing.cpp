#include <gtest/gtest.h>

#include "tests/support/brief_timing.h"
#include "workbench/cli/pipeline_timing.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/timing.h"

namespace wb {
namespace {

TEST(Timing, SummaryStatistics) {
  const TimingStats odd = summarize({3.0, 1.0, 2.0}, 10);
  EXPECT_DOUBLE_EQ(odd.median_s, 2.0);
  EXPECT_DOUBLE_EQ(odd.min_s, 1.0);
  EXPECT_DOUBLE_EQ(odd.mean_s, 2.0);
  EXPECT_DOUBLE_EQ(odd.stddev_s, 1.0);
  EXPECT_DOUBLE_EQ(odd.cv, 0.5);
  EXPECT_EQ(odd.repetitions, 3);
  EXPECT_EQ(odd.iterations, 10);
  EXPECT_DOUBLE_EQ(summarize({4.0, 1.0, 2.0, 3.0}, 1).median_s, 2.5);
  EXPECT_EQ(summarize({}, 0).repetitions, 0);
}

TEST(Timing, DefaultsDependOnTheBackend) {
  const TimingOptions cpu = TimingOptions{}.resolved(Backend::cpu);
  const TimingOptions cuda = TimingOptions{}.resolved(Backend::cuda);
  EXPECT_EQ(cpu.repetitions, 5);
  EXPECT_TRUE(cpu.flush_cache);  // the last-level cache, as the GPU's L2
  EXPECT_EQ(cuda.repetitions, 20);
  EXPECT_TRUE(cuda.flush_cache);
  TimingOptions given;
  given.repetitions = 7;
  EXPECT_EQ(given.resolved(Backend::cuda).repetitions, 7);
}

TEST(Timing, GoogleBenchmarkRunsTheRequestedRepetitions) {
  auto ex = make_executor(Backend::cpu);
  int launches = 0;
  const TimingOptions o = testing::brief_timing(4);
  const TimingStats s = measure(
      *ex, [&] { ++launches; }, o, "count");
  EXPECT_EQ(s.repetitions, 4);
  EXPECT_GE(launches, 4 * s.iterations);
  EXPECT_LE(s.min_s, s.median_s);
}

// A CPU flush writes twice the last-level cache from every thread, and costs
// milliseconds: a flushed repetition runs a bounded number of launches; an unflushed one
// (warm caches, --no-flush) as many as fill its minimum time.
TEST(Timing, CpuCacheFlushBoundsTheLaunchesPerRepetition) {
  auto ex = make_executor(Backend::cpu);
  EXPECT_GE(ex->flush_bytes(), std::size_t(8) << 20);
  EXPECT_LE(ex->flush_bytes(), std::size_t(256) << 20);
  TimingOptions o = testing::brief_timing(2, 0.01);
  int launches = 0;
  const TimingStats flushed = measure(
      *ex, [&] { ++launches; }, o, "flushed");
  EXPECT_GE(flushed.iterations, 1);
  EXPECT_LE(flushed.iterations, 32);
  o.flush_cache = false;
  const TimingStats warm = measure(
      *ex, [&] { ++launches; }, o, "warm");
  EXPECT_GT(warm.iterations, 32);
}

TEST(Timing, FailuresInsideTheLoopAreRethrown) {
  auto ex = make_executor(Backend::cpu);
  const TimingOptions o = testing::brief_timing(2);
  EXPECT_THROW(measure(
                   *ex, [] { throw std::runtime_error("launch failed"); }, o, "throws"),
               std::runtime_error);
  // A failed measurement leaves nothing behind: the next one times its own launch alone
  // (a benchmark left registered by the failed one ran again here, on its dead locals).
  int launches = 0;
  const TimingStats t = measure(*ex, [&] { ++launches; }, o, "counts");
  EXPECT_EQ(t.repetitions, 2);
  EXPECT_GT(launches, 0);
}

}  // namespace
}  // namespace wb
