#pragma once
// wb predict --workloads: predictions made before a device times them (docs/formats.md,
// wb.predictions/1), so that the device's next window scores them blind.
#include <cstdint>
#include <string>
#include <vector>

#include "workbench/runtime/predict.h"
#include "workbench/runtime/report.h"

namespace wb::cli {

struct AheadOptions {
  std::vector<std::string> workloads;  // trainer --dump-workloads files: the shapes to predict at
  std::string out;                     // the wb.predictions/1 file
  uint64_t sample_blocks = 2;
  uint64_t seed = 1;
  std::string command;
  ModelConstants constants;  // fitted to the measured reports (in sample for what they timed)
};

// For the device of `measured` (its sweep reports, one device) described by `device`:
// every legal configuration of every CUDA variant those reports never timed, at each
// workload's shape, and each workloads file's step with the trainer's default
// selection, launched and as a graph. Writes o.out and prints a summary per op.
int predict_ahead(const std::vector<Report>& measured, const DeviceModel& device, const AheadOptions& o);

}  // namespace wb::cli
