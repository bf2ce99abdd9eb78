#pragma once
// One op at one shape with one seed: fresh random inputs (never zeros) and what the
// CPU reference makes of them.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/op.h"
#include "workbench/runtime/buffers.h"

namespace wb {

struct Problem {
  // Generates the inputs and runs the reference on them. Throws UsageError when the
  // shape is not valid for the op.
  // With omit_optional, the op's optional tensors (a bias) are null for the reference.
  Problem(const OpSpec& op, const Shape& shape, uint64_t seed, bool omit_optional = false);

  // Whether the tensor takes part in this problem.
  bool present(const TensorSpec& t) const { return !(omit_optional && t.optional); }
  std::vector<std::string> omitted() const;

  const OpSpec* op;
  Shape shape;
  uint64_t seed;
  bool omit_optional;
  HostTensors initial;   // inputs, and the starting values of inouts; outputs poisoned
  HostTensors expected;  // after the reference ran on a copy of initial
};

// Fills every tensor of `t` from its Init (outputs are poisoned), then lets the op
// make its inputs consistent (OpSpec::prepare).
void fill_inputs(const HostTensors& t, uint64_t seed);

}  // namespace wb
