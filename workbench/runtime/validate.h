#pragma once
// Elementwise validation of one output tensor against the reference:
// |out - ref| <= atol + rtol * |ref|. NaN or Inf never passes, nor does a NaN in the
// reference (a poisoned element the reference failed to write).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/op.h"

namespace wb {

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

  bool biased() const;
  bool passed() const { return mismatches == 0 && count > 0 && !biased(); }
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
TensorCheck compare(const TensorSpec& spec, const void* got, DType expected_dtype, const void* expected, int64_t count,
                    Tolerance tol);
inline TensorCheck compare(const TensorSpec& spec, const void* got, const void* expected, int64_t count,
                           Tolerance tol) {
  return compare(spec, got, spec.dtype, expected, count, tol);
}

}  // namespace wb
