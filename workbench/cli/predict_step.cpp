#include "workbench/cli/predict_step.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>
#include <vector>

#include "base/errors.h"
#include "contract/registry.h"
#include "contract/shape.h"
#include "workbench/cli/commands.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/table.h"

namespace wb::cli {
namespace {

// One row of a printed kernel plan (KernelPlan::print): its columns are two or more
// spaces apart.
struct PlannedCall {
  std::string op, shape, backend, name, launch, origin;
  int calls = 0, variant = 0;
};

struct ReadPlan {
  std::string title;  // "kernel plan of one step: GPT-2 ..."
  std::vector<PlannedCall> calls;
  double measured_ms = 0;  // the log's "summary: N steps, X ms/step", 0 when absent
};

std::vector<std::string> columns(const std::string& line) {
  std::vector<std::string> out;
  static const std::regex gap(" {2,}");
  std::string trimmed = line.substr(line.find_first_not_of(' '));
  for (std::sregex_token_iterator it(trimmed.begin(), trimmed.end(), gap, -1), end; it != end; ++it)
    if (!it->str().empty()) out.push_back(*it);
  return out;
}

ReadPlan read_plan(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path + ": no such file or not readable");
  ReadPlan plan;
  std::string line;
  bool in_table = false;
  static const std::regex summary(R"(summary: \d+ steps, ([0-9.]+) ms/step)");
  std::string last_heading;  // the line before the table that names the model and device
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, summary)) plan.measured_ms = std::stod(m[1]);
    if (line.rfind("kernel plan of one step", 0) == 0 || line.rfind("GPT-2", 0) == 0) last_heading = line;
    const std::size_t first = line.find_first_not_of(' ');
    if (!in_table) {
      // The table's header row: "  op  shape  calls  backend  variant  name  launch ...".
      in_table = first != std::string::npos && line.compare(first, 3, "op ") == 0 &&
                 line.find(" variant ") != std::string::npos && line.find(" launch ") != std::string::npos;
      if (in_table && !plan.calls.empty()) throw UsageError(path + ": holds more than one kernel plan");
      if (in_table) plan.title = last_heading;
      continue;
    }
    if (first == std::string::npos || line.find('=') == std::string::npos || line.compare(0, 2, "  ") != 0) {
      in_table = false;
      continue;
    }
    const std::vector<std::string> c = columns(line);
    if (c.size() < 8)
      throw UsageError(path + ": a kernel plan's row has " + std::to_string(c.size()) + " columns: " + line);
    PlannedCall call{c[0], c[1], c[3], c[5], c[6], c.size() > 8 ? c[8] : ""};
    try {
      call.calls = std::stoi(c[2]);
      call.variant = std::stoi(c[4]);
    } catch (const std::exception&) {
      throw UsageError(path + ": not a kernel plan's row: " + line);
    }
    plan.calls.push_back(call);
  }
  if (plan.calls.empty()) throw UsageError(path + ": no kernel plan in it (trainer --print-plan prints one)");
  return plan;
}

ParamValues parse_launch(const Variant& v, const std::string& launch, const std::string& where) {
  ParamValues p;
  if (launch == "-") return v.complete(p);  // a variant without launch parameters
  std::stringstream parts(launch);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const std::size_t eq = part.find('=');
    if (eq == std::string::npos) throw UsageError(where + ": launch '" + launch + "' is not NAME=VALUE,...");
    p.set(part.substr(0, eq), std::stoi(part.substr(eq + 1)));
  }
  return v.complete(p);
}

}  // namespace

int predict_step(const DeviceModel& device, const StepOptions& o) {
  const Registry& reg = registry();
  const ReadPlan plan = read_plan(o.plan);
  auto emu = make_executor(Backend::emu);
  TextTable table({"op", "shape", "calls", "variant", "launch", "us a call", "bound", "ms in all"});
  double launched = 0, graph = 0;
  uint64_t launches = 0;
  for (const PlannedCall& c : plan.calls) {
    const std::string where = o.plan + ": " + c.op + " at " + c.shape;
    if (c.backend != "cuda")
      throw UsageError(where + ": a plan of the " + c.backend + " backend (a cuda one is predicted)");
    const OpSpec& op = reg.op(c.op);
    const Variant* v = reg.find(c.op, Backend::cuda, c.variant);
    if (!v) throw UsageError(where + ": this build has no cuda/" + std::to_string(c.variant));
    std::string shape_text = c.shape;
    for (char& ch : shape_text)
      if (ch == ' ') ch = ',';
    const Shape shape = parse_shape(shape_text);
    const ParamValues params = parse_launch(*v, c.launch, where);
    std::cerr << "predicting " << c.op << " at " << c.shape << " cuda/" << c.variant << "\n";
    std::optional<Counters> counters;
    const Variant* twin = reg.find(c.op, Backend::emu, c.variant);
    if (twin && twin->not_emulated.empty() && !is_triton_rung(*twin))  // a Triton rung: uncounted
      counters = count_sampled_or_whole(
          o.sample_blocks,
          [&](uint64_t sample) {
            CountingSession session(reg, op, shape, o.seed, *emu);
            return session.count(*twin, params, sample);
          },
          [&] {
            emu.reset();  // the old one gone before the new one resets the emulator
            emu = make_executor(Backend::emu);
          });
    const Record r = record_for(op, *v, params, shape);
    const Prediction p = predict_time(counters, r.bytes, r.flops, r.numeric, op, device, o.constants);
    launched += c.calls * p.seconds;
    graph += c.calls * as_graph_node(p, o.constants);
    launches += uint64_t(c.calls) * p.launches;
    table.add({c.op, c.shape, std::to_string(c.calls), fmt::format("cuda/{} {}", c.variant, c.name), c.launch,
               fmt::format("{:.1f}", p.seconds * 1e6), p.bound, fmt::format("{:.2f}", c.calls * p.seconds * 1e3)});
  }
  std::cout << plan.title << "\n";
  table.print(std::cout);
  std::cout << fmt::format("predicted step: {:.2f} ms launched ({} launches), {:.2f} ms as one CUDA graph (model {})\n",
                           launched * 1e3, launches, graph * 1e3, kPredictModel);
  if (plan.measured_ms > 0)
    std::cout << fmt::format(
        "measured in the same log: {:.2f} ms/step; launched, the prediction is {:+.1f}% off, as a graph {:+.1f}% (the "
        "op calls only: the step's host work and copies are not predicted)\n",
        plan.measured_ms, (launched * 1e3 / plan.measured_ms - 1) * 100, (graph * 1e3 / plan.measured_ms - 1) * 100);
  return kOk;
}

}  // namespace wb::cli
