#include "workbench/runtime/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "base/bf16.h"

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

// The unit roundoff of an arithmetic or a storage: half the spacing of values at 1.
double unit_roundoff(NumericClass c) {
  switch (c) {
    case NumericClass::fp32:
      return std::ldexp(1.0, -24);
    case NumericClass::tf32:
      return std::ldexp(1.0, -11);
    case NumericClass::bf16:
      return std::ldexp(1.0, -8);
  }
  return 0;
}

// Whether the row test applies: the tensor is whole rows of the rule's parts.
bool rows_apply(const RowRule& rule, int64_t count) {
  return rule.length > 0 && rule.parts > 0 && count % (rule.length * rule.parts) == 0;
}

// The row test (RowRule), from each row's reference and error norms (computed in the
// elementwise pass): each row against its bound plus the floor of its part.
void check_rows(TensorCheck& c, const std::vector<double>& ref_norm, const std::vector<double>& err_norm) {
  const RowRule& rule = c.rows;
  const int64_t n = int64_t(ref_norm.size());
  std::vector<double> part_max(std::size_t(rule.parts), 0.0);
  for (int64_t r = 0; r < n; ++r) {
    double& m = part_max[std::size_t(r % rule.parts)];
    if (std::isfinite(ref_norm[std::size_t(r)])) m = std::max(m, ref_norm[std::size_t(r)]);
  }
  for (int64_t r = 0; r < n; ++r) {
    const double ref = ref_norm[std::size_t(r)], err = err_norm[std::size_t(r)];
    if (!(ref > 0)) continue;  // an all-zero reference row: the elementwise test's (a NaN one fails there)
    ++c.rows_checked;
    const double floor = rule.floor * part_max[std::size_t(r % rule.parts)];
    const double allowed = rule.bound * ref + floor;
    const double rel = err / ref;
    if (ref > floor) c.max_row_rel_err = std::max(c.max_row_rel_err, std::isnan(rel) ? HUGE_VAL : rel);
    c.row_tol_used = std::max(c.row_tol_used, std::isnan(err) ? HUGE_VAL : err / allowed);
    if (!(err <= allowed)) {
      if (c.rows_failed++ == 0) {
        c.first_bad_row = r;
        c.first_bad_row_rel_err = rel;
      }
    }
  }
}

}  // namespace

RowRule row_rule(const TensorSpec& spec, const Shape& shape, NumericClass numeric) {
  if (spec.dtype == DType::i32 || spec.extents.empty()) return {};
  const Extent& last = spec.extents.back();
  RowRule rule;
  rule.length = last.dim.empty() ? last.factor : shape.get(last.dim);
  rule.parts = last.dim.empty() ? 1 : last.factor;
  const NumericClass storage = spec.dtype == DType::bf16 ? NumericClass::bf16 : NumericClass::fp32;
  const double u = std::max(unit_roundoff(numeric), unit_roundoff(storage));
  rule.bound = std::sqrt(u);
  rule.floor = kRowFloorGrowth * u;
  return rule;
}

bool TensorCheck::biased() const {
  return bias_ulps && bias_elements >= kBiasMinElements && std::fabs(*bias_ulps) > kBiasLimitUlps;
}

TensorCheck compare(const TensorSpec& spec, const void* got, DType expected_dtype, const void* expected, int64_t count,
                    Tolerance tol, RowRule rows) {
  TensorCheck c;
  c.tensor = spec.name;
  c.tol = tol;
  c.count = count;
  c.rows = rows;
  const bool bf16_out = spec.dtype == DType::bf16;
  // Every element against its tolerance, on every core: at the trainer's shapes a
  // tensor holds up to 124M parameters, compared after every configuration of a sweep.
  // The same pass sums each row's squares for the row test (one read of each element),
  // a row of the rule at a time; without the rule, the chunks are only the unit of work.
  const bool by_rows = rows_apply(rows, count);
  const int64_t length = by_rows ? rows.length : int64_t(4096);
  const int64_t chunks = (count + length - 1) / length;
  std::vector<double> ref_norm(by_rows ? std::size_t(chunks) : 0), err_norm(ref_norm.size());
  double max_abs = 0, max_rel = 0, tol_used = 0;
  int64_t non_finite = 0, mismatches = 0, first_bad = count;
#pragma omp parallel for reduction(max : max_abs, max_rel, tol_used) reduction(+ : non_finite, mismatches) \
    reduction(min : first_bad) if (count > (int64_t(1) << 16))
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    double rr = 0, ee = 0;
    for (int64_t i = chunk * length; i < std::min(count, (chunk + 1) * length); ++i) {
      const double out = element(spec.dtype, got, i), ref = element(expected_dtype, expected, i);
      rr += ref * ref;
      ee += (out - ref) * (out - ref);  // a NaN or Inf anywhere makes the row's error NaN or Inf
      bool bad;
      if (!std::isfinite(out) || !std::isfinite(ref)) {
        non_finite += !std::isfinite(out);
        bad = true;
      } else {
        const double err = std::fabs(out - ref);
        max_abs = std::max(max_abs, err);
        if (ref != 0) max_rel = std::max(max_rel, err / std::fabs(ref));
        const double ulp = tol.ulps > 0 || bf16_out ? bf16_ulp(ref) : 0.0;
        const double allowed = tol.atol + tol.rtol * std::fabs(ref) + tol.ulps * ulp;
        bad = !(err <= allowed);
        if (allowed > 0) tol_used = std::max(tol_used, err / allowed);
      }
      if (bad) {
        ++mismatches;
        first_bad = std::min(first_bad, i);
      }
    }
    if (by_rows) {
      ref_norm[std::size_t(chunk)] = std::sqrt(rr);
      err_norm[std::size_t(chunk)] = std::sqrt(ee);
    }
  }
  c.max_abs_err = max_abs;
  c.max_rel_err = max_rel;
  c.tol_used = tol_used;
  c.non_finite = non_finite;
  c.mismatches = mismatches;
  if (first_bad < count) {
    c.first_bad = first_bad;
    c.first_bad_value = element(spec.dtype, got, first_bad);
    c.first_bad_expected = element(expected_dtype, expected, first_bad);
  }
  if (by_rows) check_rows(c, ref_norm, err_norm);
  if (!bf16_out) return c;
  // The bias test, over every element up to kBiasSampleMax and an even stride through a
  // larger tensor. Each distinct reference value counts once, since equal references (a
  // row of bf16 logits has few distinct values) carry the very same rounding error, and
  // counting them all would weigh a few roundings as many.
  const int64_t stride = std::max<int64_t>(1, (count + kBiasSampleMax - 1) / kBiasSampleMax);
  double bias_sum = 0;
  std::unordered_set<double> bias_refs;
  for (int64_t i = 0; i < count; i += stride) {
    const double out = element(spec.dtype, got, i), ref = element(expected_dtype, expected, i);
    if (!std::isfinite(out) || !std::isfinite(ref) || ref == 0) continue;
    const double ulp = bf16_ulp(ref);
    if (tol.atol + tol.rtol * std::fabs(ref) <= kBiasMaxFp32Share * ulp && bias_refs.insert(ref).second) {
      bias_sum += (out - ref) * (ref > 0 ? 1.0 : -1.0) / ulp;
      ++c.bias_elements;
    }
  }
  if (c.bias_elements) c.bias_ulps = bias_sum / double(c.bias_elements);
  return c;
}

std::string TensorCheck::describe() const {
  if (count == 0) return tensor + ": empty";
  const std::string bias =
      bias_ulps ? fmt::format(", mean signed error {:+.3f} ulp over {} elements", *bias_ulps, bias_elements) : "";
  const std::string row_use =
      rows_checked ? fmt::format(", rows {:.0f}% of theirs", 100 * row_tol_used) : std::string();
  // "3 of 129 rows of 168 off by more than 6.2e-02 of their norm (first: row 98, relative error 1)"
  std::string bad_rows;
  if (rows_failed)
    bad_rows =
        fmt::format("{} of {} rows of {} off by more than {:.1e} of their norm (first: row {}, relative error {:.3g})",
                    rows_failed, rows_checked, rows.length, rows.bound, first_bad_row, first_bad_row_rel_err);
  if (passed())
    return fmt::format("{}: max abs {:.2e}, max rel {:.2e}, {:.0f}% of the tolerance{}{}", tensor, max_abs_err,
                       max_rel_err, 100 * tol_used, row_use, bias);
  if (mismatches == 0 && rows_failed)
    return fmt::format("{}: {}; every element within atol {:.1e} + rtol {:.1e}*|ref|{}", tensor, bad_rows, tol.atol,
                       tol.rtol, bias);
  if (mismatches == 0)
    return fmt::format("{}: biased: the mean signed error is {:+.3f} ulp over {} elements (more than {} from zero: "
                       "a conversion that truncates, or a rounding mode other than nearest even)",
                       tensor, *bias_ulps, bias_elements, kBiasLimitUlps);
  return fmt::format("{}: {} of {} outside atol {:.1e} + rtol {:.1e}*|ref|{}{} (first at {}: {} vs {}){}{}", tensor,
                     mismatches, count, tol.atol, tol.rtol,
                     tol.ulps > 0 ? fmt::format(" + {} ulp", tol.ulps) : std::string(),
                     non_finite ? fmt::format(", {} not finite", non_finite) : std::string(), first_bad,
                     first_bad_value, first_bad_expected, rows_failed ? "; " + bad_rows : std::string(), bias);
}

}  // namespace wb
