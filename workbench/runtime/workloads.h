#pragma once
// The op calls of one training step, and their file ("schema": "wb.workloads/1"):
// `trainer --dump-workloads` writes it, `wb sweep --workloads` sweeps every call of it,
// so that best.json holds a choice for exactly the trainer's shapes.
#include <string>
#include <vector>

#include "contract/registry.h"

namespace wb {

inline constexpr const char* kWorkloadsSchema = "wb.workloads/1";

// One op call site of a step: the op at one shape, called `calls` times per step.
struct Workload {
  std::string op;
  Shape shape;
  int calls = 1;
};

// Writes the workloads atomically; `model` describes the model ("L4 C128 NH4").
void write_workloads(const std::string& path, const Registry& registry, const std::string& model, int B, int T,
                     const std::vector<Workload>& workloads);

// Throws UsageError naming the file on anything but a wb.workloads/1 file of known ops
// at shapes they take, with at least one call.
std::vector<Workload> read_workloads(const std::string& path, const Registry& registry);

}  // namespace wb
