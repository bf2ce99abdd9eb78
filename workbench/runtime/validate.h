#pragma once
// Elementwise validation of one output tensor against the reference:
// |out - ref| <= atol + rtol * |ref|. NaN or Inf never passes, nor does a NaN in the
// reference (a poisoned element the reference failed to write).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/op.h"

namespace wb {

struct TensorCheck {
  std::string tensor;
  Tolerance tol;
  int64_t count = 0;
  int64_t mismatches = 0;  // elements outside the tolerance (non-finite ones included)
  int64_t non_finite = 0;  // NaN or Inf in the output
  double max_abs_err = 0;  // over finite elements
  double max_rel_err = 0;  // |out - ref| / |ref| over finite elements with ref != 0
  int64_t first_bad = -1;  // flat index of the first mismatch
  double first_bad_value = 0;
  double first_bad_expected = 0;

  bool passed() const { return mismatches == 0 && count > 0; }
  std::string describe() const;  // "out: 3 of 1024 outside atol 1e-05 + rtol 1e-05*|ref| (first at 17: 0.5 vs 0.25)"
};

TensorCheck compare(const TensorSpec& spec, const void* got, const void* expected, int64_t count, Tolerance tol);

}  // namespace wb
