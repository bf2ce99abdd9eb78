#include "workbench/runtime/problem.h"

#include <cstring>
#include <stdexcept>

#include "kernels/registry.h"
#include "kernels/variant.h"
#include "workbench/runtime/rng.h"
#include "workbench/runtime/validate.h"

namespace wb {

void fill_inputs(const HostTensors& t, uint64_t seed) {
  const OpSpec& op = *t.op;
  for (std::size_t i = 0; i < op.tensors.size(); ++i) {
    const TensorSpec& spec = op.tensors[i];
    void* data = t.buffers[i].data();
    const int64_t n = spec.numel(t.shape);
    if (spec.role == Role::output) {
      std::memset(data, 0xFF, spec.bytes(t.shape));
      continue;
    }
    Rng rng(seed, spec.name);
    if (spec.init.kind == Init::Kind::integers) {
      const int64_t upper = t.shape.get(spec.init.upper_dim);
      auto* p = static_cast<int32_t*>(data);
      for (int64_t k = 0; k < n; ++k) p[k] = int32_t(rng.below(upper));
    } else {
      auto* p = static_cast<float*>(data);
      for (int64_t k = 0; k < n; ++k) p[k] = float(rng.uniform(spec.init.lo, spec.init.hi));
    }
  }
  if (op.prepare) op.prepare(t.table());
}

std::vector<std::string> Problem::omitted() const {
  std::vector<std::string> out;
  for (const auto& t : op->tensors)
    if (!present(t)) out.push_back(t.name);
  return out;
}

Problem::Problem(const OpSpec& op_, const Shape& shape_, uint64_t seed_, bool omit_optional_)
    : op(&op_), shape(shape_), seed(seed_), omit_optional(omit_optional_), initial(op_, shape_), expected(op_, shape_) {
  op_.check_shape(shape_);
  fill_inputs(initial, seed_);
  for (std::size_t i = 0; i < op_.tensors.size(); ++i)
    std::memcpy(expected.buffers[i].data(), initial.buffers[i].data(), initial.buffers[i].bytes());
  op_.invoke(Registry::global().reference(op_.name), expected.table(omit_optional), Launch{});
  for (std::size_t i = 0; i < op_.tensors.size(); ++i) {
    const TensorSpec& spec = op_.tensors[i];
    if (!spec.checked() || !present(spec)) continue;
    const int64_t n = spec.numel(shape_);
    const TensorCheck self = compare(spec, expected.buffers[i].data(), expected.buffers[i].data(), n, Tolerance{});
    if (self.non_finite)
      throw std::logic_error("the reference of " + op_.name + " left " + std::to_string(self.non_finite) +
                             " non-finite values in " + spec.name);
  }
}

}  // namespace wb
