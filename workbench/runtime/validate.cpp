#include "workbench/runtime/validate.h"

#include <fmt/format.h>

#include <cmath>

namespace wb {

TensorCheck compare(const TensorSpec& spec, const void* got, const void* expected, int64_t count, Tolerance tol) {
  TensorCheck c;
  c.tensor = spec.name;
  c.tol = tol;
  c.count = count;
  auto value = [&](const void* base, int64_t i) -> double {
    return spec.dtype == DType::f32 ? double(static_cast<const float*>(base)[i])
                                    : double(static_cast<const int32_t*>(base)[i]);
  };
  for (int64_t i = 0; i < count; ++i) {
    const double out = value(got, i), ref = value(expected, i);
    bool bad;
    if (!std::isfinite(out) || !std::isfinite(ref)) {
      c.non_finite += !std::isfinite(out);
      bad = true;
    } else {
      const double err = std::fabs(out - ref);
      c.max_abs_err = std::max(c.max_abs_err, err);
      if (ref != 0) c.max_rel_err = std::max(c.max_rel_err, err / std::fabs(ref));
      bad = !(err <= tol.atol + tol.rtol * std::fabs(ref));
    }
    if (bad) {
      if (c.first_bad < 0) {
        c.first_bad = i;
        c.first_bad_value = out;
        c.first_bad_expected = ref;
      }
      ++c.mismatches;
    }
  }
  return c;
}

std::string TensorCheck::describe() const {
  if (count == 0) return tensor + ": empty";
  if (passed()) return fmt::format("{}: max abs {:.2e}, max rel {:.2e}", tensor, max_abs_err, max_rel_err);
  return fmt::format("{}: {} of {} outside atol {:.1e} + rtol {:.1e}*|ref|{} (first at {}: {} vs {})", tensor,
                     mismatches, count, tol.atol, tol.rtol,
                     non_finite ? fmt::format(", {} not finite", non_finite) : std::string(), first_bad,
                     first_bad_value, first_bad_expected);
}

}  // namespace wb
