#include "workbench/runtime/workloads.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/files.h"
#include "workbench/runtime/json_integer.h"

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
    const auto& calls = j.at("calls");
    if (!calls.is_array()) throw UsageError(path + ": calls is not an array");
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const auto& call = calls[i];
      const std::string at = path + ": calls[" + std::to_string(i) + "]";
      try {
        Workload w;
        w.op = registry.op(call.at("op").get<std::string>()).name;
        const auto& shape = call.at("shape");
        if (!shape.is_object()) throw UsageError(at + ".shape is not an object");
        for (const auto& [dim, value] : shape.items())
          w.shape.set(dim, json_integer(value, at + ".shape." + dim, 1, std::numeric_limits<int64_t>::max()));
        registry.op(w.op).check_shape(w.shape);
        if (call.contains("calls"))
          w.calls = int(json_integer(call.at("calls"), at + ".calls", 1, std::numeric_limits<int>::max()));
        workloads.push_back(std::move(w));
      } catch (const UsageError& e) {  // an unknown op or dim, a shape the op cannot take
        const std::string what = e.what();
        if (what.rfind(at, 0) == 0) throw;
        throw UsageError(at + ": " + what);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": not a wb.workloads/1 file: " + e.what());
  }
  if (workloads.empty()) throw UsageError(path + ": no calls");
  return workloads;
}

}  // namespace wb
