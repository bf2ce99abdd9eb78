#pragma once
// Shared pieces of the op catalogue's definitions (kernels/ops/*.cpp): tolerance
// shapes and argument helpers.
#include <cmath>
#include <functional>
#include <string>

#include "kernels/op.h"

namespace wb::ops {

// Results of a few float operations each: held to atol + rtol*|ref| in fp32, and to
// the looser floors of tf32 (1e-3) and bf16 (2e-2).
inline ToleranceFn elementwise(double atol = 1e-5, double rtol = 1e-5) {
  return tolerance({atol, rtol}, {std::max(atol, 1e-3), std::max(rtol, 1e-3)},
                   {std::max(atol, 2e-2), std::max(rtol, 2e-2)});
}

// Results that sum K = length(shape) terms of magnitude about one: the absolute error
// of a float sum grows like sqrt(K) (random rounding), more so with tf32 or bf16
// inputs (10 and 7 bits of mantissa).
inline ToleranceFn summed(std::function<double(const Shape&)> length) {
  return [length](NumericClass c, const Shape& s) {
    const double root = std::sqrt(std::max(1.0, length(s)));
    switch (c) {
      case NumericClass::fp32:
        return Tolerance{2e-5 * root, 1e-5};
      case NumericClass::tf32:
        return Tolerance{4e-3 * root, 1e-3};
      case NumericClass::bf16:
        return Tolerance{1.5e-2 * root, 1e-2};
    }
    return Tolerance{2e-5 * root, 1e-5};
  };
}

// Summed over one shape dim, or over the B*T rows.
inline ToleranceFn summed_over(std::string dim) {
  return summed([dim](const Shape& s) { return double(s.get(dim)); });
}
inline ToleranceFn summed_over_rows() {
  return summed([](const Shape& s) { return double(s.B * s.T); });
}

inline int as_int(int64_t v) { return static_cast<int>(v); }

}  // namespace wb::ops
