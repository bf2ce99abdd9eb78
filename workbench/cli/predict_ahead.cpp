#include "workbench/cli/predict_ahead.h"

#include <fmt/format.h>

#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "base/errors.h"
#include "base/files.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/output.h"
#include "workbench/runtime/can_run.h"
#include "workbench/runtime/context.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/kernel_plan.h"
#include "workbench/runtime/table.h"
#include "workbench/runtime/workloads.h"

namespace wb::cli {
namespace {

using nlohmann::json;

struct Predicted {
  const OpSpec* op = nullptr;
  const Variant* variant = nullptr;
  ParamValues params;
  Shape shape;
  Prediction prediction;
  bool counted = false;  // false: a library rung, predicted from the op's models
  std::string note;      // how it was counted, where not as asked
};

json shape_json(const OpSpec& op, const Shape& s) {
  json j = json::object();
  for (const std::string& d : op.dims) j[d] = s.get(d);
  return j;
}

json params_json(const ParamValues& p) {
  json j = json::object();
  for (const auto& [name, value] : p.items()) j[name] = value;
  return j;
}

// Each configuration counted and predicted once; an (op, shape)'s inputs made once
// while its configurations are counted (one op's tensors at a time: the classifier's
// are gigabytes at the trainer's shapes).
class Predictor {
 public:
  Predictor(const Registry& reg, const DeviceModel& device, const AheadOptions& o)
      : reg_(reg), device_(device), o_(o), emu_(make_executor(Backend::emu)) {}

  const Predicted& at(const OpSpec& op, const Variant& v, const ParamValues& p, const Shape& shape) {
    const std::string problem = op.name + " at " + op.describe_shape(shape);
    const std::string key = problem + " " + v.key() + " " + p.describe();
    if (auto it = index_.find(key); it != index_.end()) return made_[it->second];
    std::optional<Counters> counters;
    const Variant* twin = reg_.find(op.name, Backend::emu, v.id);
    std::string note;
    if (twin && twin->not_emulated.empty() && !is_triton_rung(*twin))  // a Triton rung: uncounted
      counters = count_sampled_or_whole(
          o_.sample_blocks, [&](uint64_t sample) { return session(op, shape, problem).count(*twin, p, sample); },
          [&] { lost(); }, &note);
    const Record r = record_for(op, v, p, shape);  // the op's byte and flop models, the numeric class
    made_.push_back({&op, &v, p, shape, predict_time(counters, r.bytes, r.flops, r.numeric, op, device_, o_.constants),
                     bool(counters), note});
    index_[key] = made_.size() - 1;
    return made_.back();
  }

 private:
  // The inputs of `problem` on the emulator, made when it is not the last one's.
  CountingSession& session(const OpSpec& op, const Shape& shape, const std::string& problem) {
    if (problem != session_problem_ || !session_) {
      session_.reset();  // the previous problem's tensors first
      session_ = std::make_unique<CountingSession>(reg_, op, shape, o_.seed, *emu_);
      session_problem_ = problem;
    }
    return *session_;
  }
  void lost() {  // a fault loses the emulated device, its tensors with it
    session_.reset();
    emu_.reset();  // the old one gone before the new one resets the emulator
    emu_ = make_executor(Backend::emu);
  }

  const Registry& reg_;
  const DeviceModel& device_;
  const AheadOptions& o_;
  std::unique_ptr<Executor> emu_;
  std::unique_ptr<CountingSession> session_;
  std::string session_problem_;
  std::deque<Predicted> made_;  // stable addresses
  std::map<std::string, std::size_t> index_;
};

// The (op, variant) pairs the device's reports timed, at any shape.
std::set<std::pair<std::string, int>> timed_variants(const std::vector<Report>& measured) {
  std::set<std::pair<std::string, int>> timed;
  for (const Report& rep : measured)
    for (const Record& r : rep.records)
      if (r.backend == Backend::cuda && r.status == Status::ok && r.timing) timed.insert({r.op, r.variant});
  return timed;
}

bool all_bf16(const std::vector<Workload>& workloads) {
  for (const Workload& w : workloads)
    if (w.op.size() < 5 || w.op.compare(w.op.size() - 5, 5, "_bf16") != 0) return false;
  return !workloads.empty();
}

json prediction_json(const Predicted& x) {
  return {{"op", x.op->name},
          {"shape", shape_json(*x.op, x.shape)},
          {"backend", "cuda"},
          {"variant", x.variant->id},
          {"variant_name", x.variant->name},
          {"params", params_json(x.params)},
          {"source_hash", x.variant->source_hash},
          {"seconds", x.prediction.seconds},
          {"bound", x.prediction.bound},
          {"counted", x.counted},
          {"note", x.note}};
}

struct StepCall {
  const Workload* workload;
  const Predicted* predicted;
};

json step_json(const std::string& path, bool bf16, const std::vector<StepCall>& calls, bool graph,
               const ModelConstants& m) {
  json list = json::array();
  double seconds = 0;
  for (const StepCall& c : calls) {
    const double one = graph ? as_graph_node(c.predicted->prediction, m) : c.predicted->prediction.seconds;
    seconds += c.workload->calls * one;
    list.push_back({{"op", c.workload->op},
                    {"shape", shape_json(*c.predicted->op, c.workload->shape)},
                    {"variant", c.predicted->variant->id},
                    {"params", params_json(c.predicted->params)},
                    {"calls", c.workload->calls},
                    {"seconds", one}});
  }
  return {{"workloads", path},       {"storage", bf16 ? "bf16" : "fp32"},
          {"selection", "defaults"}, {"launch", graph ? "graph" : "launched"},
          {"ms", seconds * 1e3},     {"calls", list}};
}

}  // namespace

int predict_ahead(const std::vector<Report>& measured, const DeviceModel& device, const AheadOptions& o) {
  const Registry& reg = registry();
  const DeviceInfo& info = measured.front().context.device;
  const auto timed = timed_variants(measured);
  Predictor predictor(reg, device, o);
  std::vector<const Predicted*> predictions;
  std::set<const Predicted*> listed;
  json steps = json::array();
  TextTable table({"op and shape", "never timed: configurations", "predicted fastest", "us", "bound"});
  for (const std::string& path : o.workloads) {
    const std::vector<Workload> workloads = read_workloads(path, reg);
    const bool bf16 = all_bf16(workloads);
    const RunFilter trainer_filter{bf16 ? NumericClass::bf16 : NumericClass::fp32};
    std::vector<StepCall> calls;
    for (const Workload& w : workloads) {
      const OpSpec& op = reg.op(w.op);
      std::cerr << "predicting " << w.op << " at " << op.describe_shape(w.shape) << "\n";
      const Predicted* fastest = nullptr;
      int configurations = 0;
      for (const Variant* v : reg.variants(w.op, Backend::cuda)) {
        if (timed.count({w.op, v->id})) continue;
        if (is_torch_rung(*v)) continue;  // PyTorch's kernels: nothing of theirs is counted (docs/torch.md)
        for (const ParamValues& p : v->all_params()) {
          if (why_cannot_run(reg, *v, w.shape, p, info, RunFilter{NumericClass::bf16})) continue;
          const Predicted& x = predictor.at(op, *v, p, w.shape);
          ++configurations;
          if (!fastest || x.prediction.seconds < fastest->prediction.seconds) fastest = &x;
          if (listed.insert(&x).second) predictions.push_back(&x);
        }
      }
      const Variant* chosen = default_variant(reg, w.op, info, trainer_filter, w.shape);
      if (!chosen) throw UsageError(path + ": no CUDA variant of " + w.op + " can run " + op.describe_shape(w.shape));
      calls.push_back({&w, &predictor.at(op, *chosen, chosen->default_params(), w.shape)});
      table.add({w.op + " at " + op.describe_shape(w.shape), std::to_string(configurations),
                 fastest ? fastest->variant->key() + " " + fastest->params.describe() : "-",
                 fastest ? fmt::format("{:.1f}", fastest->prediction.seconds * 1e6) : "-",
                 fastest ? fastest->prediction.bound : "-"});
    }
    for (bool graph : {false, true}) steps.push_back(step_json(path, bf16, calls, graph, o.constants));
  }

  json list = json::array();
  for (const Predicted* x : predictions) list.push_back(prediction_json(*x));
  const SourceState source = source_state();
  const ReportContext& c = measured.front().context;
  const json file{{"schema", "wb.predictions/1"},
                  {"made",
                   {{"commit", source.commit + (source.dirty ? "-dirty" : "")},
                    {"date", utc_now().substr(0, 10)},
                    {"model", kPredictModel},
                    {"constants", to_json(o.constants)},
                    {"command", o.command},
                    {"sample_blocks", o.sample_blocks},
                    {"seed", o.seed}}},
                  {"device",
                   {{"name", info.name},
                    {"slug", info.slug},
                    {"multiprocessors", info.multiprocessors},
                    {"clock_khz", info.clock_khz},
                    {"compute_capability", info.compute_capability},
                    {"ceilings",
                     {{"copy_gbps", c.ceilings.copy_gbps},
                      {"fp32_tflops", c.ceilings.fp32_tflops},
                      {"tf32_tflops", c.ceilings.tf32_tflops},
                      {"bf16_tflops", c.ceilings.bf16_tflops}}}}},
                  {"predictions", list},
                  {"steps", steps}};
  write_file_atomically(o.out, file.dump(1) + "\n");

  table.print(std::cout);
  for (const json& s : steps)
    std::cout << fmt::format("step of {} ({}, default variants, {}): {:.2f} ms predicted\n",
                             s["workloads"].get<std::string>(), s["storage"].get<std::string>(),
                             s["launch"].get<std::string>(), s["ms"].get<double>());
  std::cout << fmt::format(
      "{} predictions of never-timed configurations on {} written to {} (model {}, counted with "
      "--sample-blocks {}, seed {})\n",
      predictions.size(), info.name, o.out, kPredictModel, o.sample_blocks, o.seed);
  return kOk;
}

}  // namespace wb::cli
