#include "workbench/runtime/workloads.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/errors.h"
#include "kernels/files.h"

namespace wb {

void write_workloads(const std::string& path, const Registry& registry, const std::string& model, int B, int T,
                     const std::vector<Workload>& workloads) {
  nlohmann::json calls = nlohmann::json::array();
  for (const Workload& w : workloads) {
    nlohmann::json shape = nlohmann::json::object();
    for (const auto& d : registry.op(w.op).dims) shape[d] = w.shape.get(d);
    calls.push_back({{"op", w.op}, {"shape", shape}, {"calls", w.calls}});
  }
  const nlohmann::json j{{"schema", kWorkloadsSchema}, {"model", model}, {"B", B}, {"T", T}, {"calls", calls}};
  write_file_atomically(path, j.dump(2) + "\n");
}

std::vector<Workload> read_workloads(const std::string& path, const Registry& registry) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read the workloads file " + path);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": malformed JSON: " + e.what());
  }
  std::vector<Workload> workloads;
  try {
    if (j.value("schema", "") != kWorkloadsSchema) throw UsageError(path + ": not a wb.workloads/1 file");
    for (const auto& call : j.at("calls")) {
      Workload w;
      w.op = registry.op(call.at("op").get<std::string>()).name;
      for (const auto& [dim, value] : call.at("shape").items()) w.shape.set(dim, value.get<int64_t>());
      registry.op(w.op).check_shape(w.shape);
      w.calls = call.value("calls", 1);
      workloads.push_back(std::move(w));
    }
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": not a wb.workloads/1 file: " + e.what());
  }
  if (workloads.empty()) throw UsageError(path + ": no calls");
  return workloads;
}

}  // namespace wb
