#pragma once
// One op at one shape with one seed: fresh random inputs (never zeros) and what the
// CPU reference makes of them.
#include <cstdint>
#include <string>
#include <vector>

#include "contract/op.h"
#include "contract/registry.h"
#include "workbench/runtime/buffers.h"

namespace wb {

struct Problem {
  // Generates the inputs and runs the reference on them. Throws UsageError when the
  // shape is not valid for the op or its two sets of tensors do not fit in host memory.
  // With omit_optional, the op's optional tensors (a bias) are null for the reference.
  // The registry gives the reference (of this op, and of those OpSpec::prepare runs).
  Problem(const Registry& registry, const OpSpec& op, const Shape& shape, uint64_t seed, bool omit_optional = false);

  // Whether the tensor takes part in this problem.
  bool present(const TensorSpec& t) const { return !(omit_optional && t.optional); }
  std::vector<std::string> omitted() const;

  const OpSpec* op;
  // The op whose tensors `expected` holds: op itself, or for an op on bf16 storage its
  // fp32 twin (OpSpec::fp32_twin), whose reference runs on the inputs widened to fp32,
  // or op with its bf16 tensors widened, for the truth its reference carries
  // (OpSpec::own_truth, Variant::truth).
  const OpSpec* truth;
  Shape shape;
  uint64_t seed;
  bool omit_optional;
  HostTensors initial;   // inputs, and the starting values of inouts; outputs poisoned
  HostTensors expected;  // truth's tensors after its reference ran on (a widened copy of) initial
};

// Bytes of one set of the op's tensors at a shape that passed op.check_shape.
int64_t tensor_set_bytes(const OpSpec& op, const Shape& shape);

// Throws UsageError, naming the op and its dims, when `sets` sets of the op's tensors
// (what they are for: `purpose`) need more than `available` bytes of `memory` ("host
// memory"); available 0: unknown, not checked. Called before anything is allocated, so that a shape no machine here
// can hold is bad input, not an allocation failure half-way.
void check_fits(const OpSpec& op, const Shape& shape, int64_t sets, int64_t available, const std::string& memory,
                const std::string& purpose);

// Fills every tensor of `t` from its Init (outputs are poisoned; a bf16 tensor gets
// the values an fp32 one would, rounded to nearest even), then lets the op make its
// inputs consistent (OpSpec::prepare, running references of the registry).
void fill_inputs(const HostTensors& t, uint64_t seed, const Registry& registry);

}  // namespace wb
