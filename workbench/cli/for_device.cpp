#include "workbench/cli/for_device.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "base/errors.h"
#include "workbench/cli/output.h"
#include "workbench/runtime/json_file.h"
#include "workbench/runtime/predict.h"

namespace wb::cli {
namespace {

// The one place wb check, run and sweep call the prediction model: a change of
// CountingSession's or predict_time's signature is a change here only.
PredictedTime predict_one(CountingSession& session, const Variant& emu_variant, const Record& r, uint64_t sample_blocks,
                          const DeviceModel& device, const ModelConstants& constants) {
  const Counters counters = session.count(emu_variant, r.params, sample_blocks);
  const Prediction p = predict_time(counters, r.bytes, r.flops, r.numeric, session.op(), device, constants);
  return PredictedTime{p.seconds, p.bound, p.launches};
}

// The constants fitted to the device's own measured sweep, where wb predict --scores-out
// wrote them under results/<slug>/predict-scores.json with this model's version; else
// the prior (a device never measured, or scores of an older model, whose constants mean
// other things). The second member says which, for the report and the heading.
std::pair<ModelConstants, std::string> constants_for(const DeviceDescription& d) {
  const std::string path = default_results_dir() + "/" + d.slug + "/predict-scores.json";
  if (!std::filesystem::exists(path)) return {ModelConstants{}, "prior"};
  const nlohmann::json j = read_json_file(path);
  if (!j.is_object() || j.value("model", "") != kPredictModel || !j.contains("fitted") || !j["fitted"].is_object())
    return {ModelConstants{}, "prior"};
  return {constants_from_json(j["fitted"], path + " 'fitted'"), "fitted: " + path};
}

}  // namespace

void add_predict_for_option(CLI::App& cmd, std::string& device) {
  cmd.add_option("--predict-for", device,
                 "with --backend emu: beside each configuration that passes, its time predicted on this device (a "
                 "slug of results/devices/, e.g. nvidia-h200, or a description's .json; docs/counters.md)");
}

DevicePredictor::DevicePredictor(const std::string& device, Backend backend, uint64_t sample_blocks)
    : sample_blocks_(sample_blocks) {
  if (backend != Backend::emu)
    throw UsageError("--predict-for predicts from the emulator's counts: give it with --backend emu, not " +
                     std::string(to_string(backend)));
  device_ = find_device_description(device);
  std::tie(constants_, constants_source_) = constants_for(device_);
}

DevicePredictor::~DevicePredictor() = default;

void DevicePredictor::predict(std::vector<Record>& records, const Registry& reg) {
  std::size_t total = 0;
  for (const Record& r : records) total += r.status == Status::ok && r.omitted.empty();
  if (total == 0) return;
  // Made after the check: the emulator is one context, and making an executor clears an
  // error a fault of the check left there (its records say so; the counting must run).
  if (!emu_) emu_ = make_executor(Backend::emu);
  Progress progress(total);
  std::string key;  // op, shape and seed of the session's inputs
  std::unique_ptr<CountingSession> session;
  for (Record& r : records) {
    if (r.status != Status::ok || !r.omitted.empty()) continue;
    const Variant* twin = reg.find(r.op, Backend::emu, r.variant);
    // A Triton rung runs under the interpreter: no emulated kernel to count.
    if (!twin || !twin->not_emulated.empty() || is_triton_rung(*twin)) continue;
    progress.step("predicting " + r.op + " " + r.variant_label() + " " + r.params.describe());
    const std::string k = r.op + " " + r.shape_text() + " " + std::to_string(r.seed);
    if (!session || k != key) {
      session.reset();  // one op's tensors at a time
      session = std::make_unique<CountingSession>(reg, reg.op(r.op), r.shape, r.seed, *emu_);
      key = k;
    }
    r.predicted = predict_one(*session, *twin, r, sample_blocks_, device_.model, constants_);
  }
}

PredictedFor DevicePredictor::predicted_for() const {
  PredictedFor f;
  f.device = device_.model.name;
  f.slug = device_.slug;
  f.compute_capability = device_.compute_capability;
  f.multiprocessors = device_.model.sms;
  f.l2_bytes = int64_t(device_.model.l2_bytes);
  f.description = device_.path;
  f.device_measured = device_.model.measured;
  f.model = kPredictModel;
  f.sample_blocks = sample_blocks_;
  f.constants = constants_source_;
  return f;
}

std::string DevicePredictor::heading() const {
  const std::string counted = sample_blocks_ == 0   ? "every block counted"
                              : sample_blocks_ == 1 ? "1 block counted per launch"
                                                    : std::to_string(sample_blocks_) + " blocks counted per launch";
  return fmt::format("predicted for {} ({}: {}; model {}, {}, {} constants)", device_.model.name, device_.path,
                     device_.model.measured ? "a device wb measured" : "published figures, unscored until measured",
                     kPredictModel, counted, constants_source_ == "prior" ? "prior" : "fitted");
}

std::string format_predicted(const Record& r) {
  if (!r.predicted) return "-";
  return format_time(r.predicted->seconds) + " (" + r.predicted->bound + ")";
}

}  // namespace wb::cli
