#pragma once
// --predict-for DEVICE (wb check, run and sweep, --backend emu only): beside each
// configuration that passed the emulated check, the time the prediction model
// (workbench/runtime/predict.h) gives it on a described device
// (workbench/runtime/device_description.h). The records carry it as `predicted`, never
// as timing, and their report's context names the device (PredictedFor).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contract/registry.h"
#include "workbench/runtime/context.h"
#include "workbench/runtime/device_description.h"
#include "workbench/runtime/predict.h"
#include "workbench/runtime/record.h"

namespace CLI {
class App;
}  // namespace CLI

namespace wb::cli {

inline constexpr uint64_t kDefaultSampleBlocks = 2;  // as wb predict counts

// --predict-for DEVICE: a slug of results/devices/ or a description's path.
void add_predict_for_option(CLI::App& cmd, std::string& device);

// Predicts the records of an emulated check for one device.
class DevicePredictor {
 public:
  // UsageError for a backend other than emu, or an unknown or broken description.
  DevicePredictor(const std::string& device, Backend backend, uint64_t sample_blocks);
  ~DevicePredictor();

  // Sets `predicted` on every record that passed (status ok) with all its tensors: its
  // configuration counted once in emulation, on inputs made from the record's seed (one
  // set per op, shape and seed), and predicted. The others keep none.
  void predict(std::vector<Record>& records, const Registry& reg);
  // What a report of these records says of the device (ReportContext::predicted_for).
  PredictedFor predicted_for() const;
  const DeviceDescription& device() const { return device_; }
  // "predicted for NVIDIA H100 80GB HBM3 (results/devices/nvidia-h100-sxm.json: published
  // figures, unscored until measured; model wb.predict/4, 2 blocks counted per launch,
  // prior constants)"
  std::string heading() const;

 private:
  DeviceDescription device_;
  ModelConstants constants_;      // fitted to the device's measured sweep, else the prior
  std::string constants_source_;  // "fitted: <file>" or "prior" (PredictedFor::constants)
  uint64_t sample_blocks_;
  std::unique_ptr<Executor> emu_;  // made by predict(), after the check
};

// "12.3 us (dram)", or "-" without a prediction.
std::string format_predicted(const Record& r);

}  // namespace wb::cli
