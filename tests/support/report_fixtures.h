#pragma once
// The report fixtures that the suites running wb best, compare and merge write
// (tests/cli/test_best_compare.cpp, tests/cli/test_shard.cpp): timed CUDA records of
// one shape, the report around them, and a fresh folder per test to write them in.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "contract/shape.h"
#include "tests/support/test_helpers.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/report.h"

namespace wb::testing {

// An ok, deterministic CUDA record of `op`'s `variant` (named "v<variant>") at
// B=8 T=1024 C=768, measured at this median and standard deviation (seconds) over 20
// repetitions of 10 iterations, the fastest 1% below the median.
inline Record timed_record(const std::string& op, int variant, double median_s, double stddev_s) {
  Record r;
  r.op = op;
  r.backend = Backend::cuda;
  r.variant = variant;
  r.variant_name = "v" + std::to_string(variant);
  r.dims = {"B", "T", "C"};
  r.shape = parse_shape("B=8,T=1024,C=768");
  r.status = Status::ok;
  TimingStats t;
  t.median_s = t.mean_s = median_s;
  t.min_s = median_s * 0.99;
  t.stddev_s = stddev_s;
  t.repetitions = 20;
  t.iterations = 10;
  r.timing = t;
  r.deterministic = true;
  return r;
}

// A report of `records` from the CUDA device `device`, made on 2026-11-21 with 20
// repetitions of at least 10 ms.
inline Report fixture_report(std::vector<Record> records, const std::string& device) {
  Report r;
  r.context.device.backend = Backend::cuda;
  r.context.device.name = device;
  r.context.device.slug = slugify(device);
  r.context.created = "2026-11-21T00:00:00Z";
  r.context.timing.repetitions = 20;
  r.context.timing.min_time_s = 0.01;
  r.records = std::move(records);
  return r;
}

class ReportFolder : public ::testing::Test {
 protected:
  // Where `name` is (or would be) in the folder.
  std::string path(const std::string& name) const { return dir_ / name; }
  // Writes the report as `name` in the folder; its path.
  std::string write(const std::string& name, const Report& r) const {
    write_report(r, path(name));
    return path(name);
  }
  // Writes the text as `name` in the folder; its path.
  std::string write_text(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }

  TempDir dir_;
};

}  // namespace wb::testing
