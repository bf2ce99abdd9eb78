#include "workbench/runtime/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "kernels/bf16.h"

namespace wb {

namespace {

double element(DType dtype, const void* base, int64_t i) {
  switch (dtype) {
    case DType::f32:
      return double(static_cast<const float*>(base)[i]);
    case DType::i32:
      return double(static_cast<const int32_t*>(base)[i]);
    case DType::bf16:
      return double(to_float(static_cast<const bf16*>(base)[i]));
  }
  return 0;
}

}  // namespace

bool TensorCheck::biased() const {
  return bias_ulps && bias_elements >= kBiasMinElements && std::fabs(*bias_ulps) > kBiasLimitUlps;
}

TensorCheck compare(const TensorSpec& spec, const void* got, DType expected_dtype, const void* expected, int64_t count,
                    Tolerance tol) {
  TensorCheck c;
  c.tensor = spec.name;
  c.tol = tol;
  c.count = count;
  const bool bf16_out = spec.dtype == DType::bf16;
  double bias_sum = 0;
  // The reference values the bias test has counted: each distinct value once, since
  // equal references (a row of bf16 logits has few distinct values) carry the very same
  // rounding error, and counting them all would weigh a few roundings as many.
  std::unordered_set<double> bias_refs;
  for (int64_t i = 0; i < count; ++i) {
    const double out = element(spec.dtype, got, i), ref = element(expected_dtype, expected, i);
    bool bad;
    if (!std::isfinite(out) || !std::isfinite(ref)) {
      c.non_finite += !std::isfinite(out);
      bad = true;
    } else {
      const double err = std::fabs(out - ref);
      c.max_abs_err = std::max(c.max_abs_err, err);
      if (ref != 0) c.max_rel_err = std::max(c.max_rel_err, err / std::fabs(ref));
      const double ulp = tol.ulps > 0 || bf16_out ? bf16_ulp(ref) : 0.0;
      const double fp32_part = tol.atol + tol.rtol * std::fabs(ref);
      const double allowed = fp32_part + tol.ulps * ulp;
      bad = !(err <= allowed);
      if (allowed > 0) c.tol_used = std::max(c.tol_used, err / allowed);
      if (bf16_out && ref != 0 && fp32_part <= kBiasMaxFp32Share * ulp && bias_refs.insert(ref).second) {
        bias_sum += (out - ref) * (ref > 0 ? 1.0 : -1.0) / ulp;
        ++c.bias_elements;
      }
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
  if (bf16_out && c.bias_elements) c.bias_ulps = bias_sum / double(c.bias_elements);
  return c;
}

std::string TensorCheck::describe() const {
  if (count == 0) return tensor + ": empty";
  const std::string bias =
      bias_ulps ? fmt::format(", mean signed error {:+.3f} ulp over {} elements", *bias_ulps, bias_elements) : "";
  if (passed())
    return fmt::format("{}: max abs {:.2e}, max rel {:.2e}, {:.0f}% of the tolerance{}", tensor, max_abs_err,
                       max_rel_err, 100 * tol_used, bias);
  if (mismatches == 0)
    return fmt::format("{}: biased: the mean signed error is {:+.3f} ulp over {} elements (more than {} from zero: "
                       "a conversion that truncates, or a rounding mode other than nearest even)",
                       tensor, *bias_ulps, bias_elements, kBiasLimitUlps);
  return fmt::format("{}: {} of {} outside atol {:.1e} + rtol {:.1e}*|ref|{}{} (first at {}: {} vs {}){}", tensor,
                     mismatches, count, tol.atol, tol.rtol,
                     tol.ulps > 0 ? fmt::format(" + {} ulp", tol.ulps) : std::string(),
                     non_finite ? fmt::format(", {} not finite", non_finite) : std::string(), first_bad,
                     first_bad_value, first_bad_expected, bias);
}

}  // namespace wb
