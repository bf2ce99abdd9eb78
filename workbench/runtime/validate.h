#pragma once
// Validation of one output tensor against the reference. Elementwise:
// |out - ref| <= atol + rtol * |ref|. NaN or Inf never passes, nor does a NaN in the
// reference (a poisoned element the reference failed to write). And per row (RowRule):
// the elementwise tolerance is sized for the tensor's largest values, so a row of small
// values can be zero, or another row's, inside it; a row's error is also held to a share
// of the row's own size.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/op.h"

namespace wb {

// The row test of one tensor: its elements read as rows of `length` consecutive values,
// `parts` rows side by side in one index of its leading extents (dqkv's 3C holds a
// token's q, k and v rows: 3 parts; 1 otherwise). A row with reference norm R > 0 passes
// when
//   ||out - ref|| <= bound * R + floor * (the largest R among the rows of its part),
// bound = sqrt(u) and floor = kRowFloorGrowth * u, u the unit roundoff of the coarser
// of the variant's arithmetic and the tensor's storage (fp32 2^-24, tf32 2^-11, bf16
// 2^-8). Why these:
// - bound = sqrt(u): a row that agrees with its reference to fewer than half the bits the
//   arithmetic carries is wrong, not rounded. It is never tighter than the elementwise
//   rtol of any class (fp32 1e-5 < 2.4e-4, tf32 1e-3 < 0.022, bf16 1e-2 < 0.0625), so a
//   row whose every element meets rtol passes it, and a zero row (relative error 1), a
//   row written from another row (about 1.4) or a row of garbage fails it however small
//   it is, down to the floor.
// - floor: a row whose reference cancels to near zero (the first query's dQ in causal
//   attention, where dP - D vanishes in exact arithmetic) may be rounding noise in the
//   output and in the reference alike, its relative error near 1 when correct. Its
//   error is the rounding of terms of the size the tensor's rows have, so the floor is a
//   modest growth (16) of u times the largest row of the same part: rows below 16u of it
//   are judged by the elementwise test alone.
// - rows whose reference is exactly zero (masked, padded) are the elementwise test's.
// What it cannot see: a row off by less than sqrt(u) relative (the elementwise test's
// and the bias test's business), and a row smaller than the floor.
struct RowRule {
  int64_t length = 0;  // 0: no row test
  int64_t parts = 1;
  double bound = 0;
  double floor = 0;
};
inline constexpr double kRowFloorGrowth = 16;

// The row rule of `spec` at `shape` for a variant of class `numeric`: rows along the
// last extent (one part of it when it is a multiple of a dim, "3C"); no row test for
// integer tensors (compared exactly).
RowRule row_rule(const TensorSpec& spec, const Shape& shape, NumericClass numeric);

struct TensorCheck {
  std::string tensor;
  Tolerance tol;
  int64_t count = 0;
  // bf16 outputs: the mean of (out - ref) * sign(ref) in units of ulp(ref), over the
  // finite elements with ref != 0 whose fp32 tolerance (atol + rtol |ref|) is at most
  // kBiasMaxFp32Share of an ulp: where the rounding, not the fp32 arithmetic before
  // it, decides the error (near zero an ulp is tiny, and an fp32 error the tolerance
  // allows -- a GELU's cancelling tail -- would be many ulps), each distinct reference
  // value counted once (equal references carry the same rounding error: a row of bf16
  // logits has few distinct values), over at most kBiasSampleMax elements evenly
  // strided. Rounding to nearest
  // leaves it near zero; a conversion that truncates pulls every value toward zero by
  // about half an ulp, and a plain mean of signed errors would cancel on zero-mean
  // outputs. Checked when enough elements take part (kBiasMinElements): |bias| above
  // kBiasLimitUlps fails.
  std::optional<double> bias_ulps;
  int64_t bias_elements = 0;
  // The largest |out - ref| as a fraction of what the tolerance allows there (above 1:
  // a mismatch), over the finite elements: how much of its tolerance a variant uses.
  double tol_used = 0;
  int64_t mismatches = 0;  // elements outside the tolerance (non-finite ones included)
  int64_t non_finite = 0;  // NaN or Inf in the output
  double max_abs_err = 0;  // over finite elements
  double max_rel_err = 0;  // |out - ref| / |ref| over finite elements with ref != 0
  int64_t first_bad = -1;  // flat index of the first mismatch
  double first_bad_value = 0;
  double first_bad_expected = 0;
  // The row test (rows.length == 0: not run, as in reports before it).
  RowRule rows;
  int64_t rows_checked = 0;  // rows with a reference norm above zero
  int64_t rows_failed = 0;   // of those, rows past their bound (a NaN in a row fails it)
  int64_t first_bad_row = -1;
  double first_bad_row_rel_err = 0;  // ||out - ref|| / ||ref|| of that row
  // The largest ||out - ref|| of a row as a fraction of what the rule allows it, and the
  // largest relative error of a row whose reference norm is above its floor (how close
  // correct rows come to the bound).
  double row_tol_used = 0;
  double max_row_rel_err = 0;

  bool biased() const;
  bool passed() const { return mismatches == 0 && rows_failed == 0 && count > 0 && !biased(); }
  std::string describe() const;  // "out: 3 of 1024 outside atol 1e-05 + rtol 1e-05*|ref| (first at 17: 0.5 vs 0.25)"
};

// Elements, and the bound in ulps, of the bias test of bf16 outputs. With one rounding
// to nearest the error in ulps is spread over [-1/2, 1/2] (standard deviation about
// 0.29): over 256 elements its mean strays past 0.15 ulp with odds of about 1 in
// 10^16, while a truncation's mean is about -0.5 ulp.
inline constexpr int64_t kBiasMinElements = 256;
inline constexpr double kBiasLimitUlps = 0.15;
inline constexpr double kBiasMaxFp32Share = 0.25;
// The bias test looks at every element of a tensor up to this many, and at an even
// stride through a larger one: the mean of a million roundings has a standard error
// near 0.0003 ulp, far below kBiasLimitUlps.
inline constexpr int64_t kBiasSampleMax = int64_t(1) << 20;

// `got` holds spec's elements (f32, i32 or bf16), `expected` the reference's, of
// `expected_dtype` (f32 where the reference ran on fp32 storage for a bf16 op).
// `rows`: the row test, none by default.
TensorCheck compare(const TensorSpec& spec, const void* got, DType expected_dtype, const void* expected, int64_t count,
                    Tolerance tol, RowRule rows = {});
inline TensorCheck compare(const TensorSpec& spec, const void* got, const void* expected, int64_t count, Tolerance tol,
                           RowRule rows = {}) {
  return compare(spec, got, spec.dtype, expected, count, tol, rows);
}

}  // namespace wb
