// Validation and the harness, with deliberately broken test-only variants of
// layernorm_forward: each must come back incorrect, for the right reason.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "base/bf16.h"
#include "base/errors.h"
#include "contract/registry.h"
#include "reference/reference.h"
#include "tests/support/brief_timing.h"
#include "tests/support/test_variant.h"
#include "workbench/cli/pipeline_timing.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/validate.h"

namespace wb {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

int64_t count(const LayernormForwardArgs& a) { return int64_t(a.B) * a.T * a.C; }

void correct(const LayernormForwardArgs& a, const Launch&) { reference::layernorm_forward(a); }

void off_by_a_little(const LayernormForwardArgs& a, const Launch&) {
  reference::layernorm_forward(a);
  a.out[5] += 1e-3f;
}

// Computes everything but never writes the last output element: only poisoning
// catches this.
void leaves_one_unwritten(const LayernormForwardArgs& a, const Launch&) {
  std::vector<float> out(count(a));
  LayernormForwardArgs tmp = a;
  tmp.out = out.data();
  reference::layernorm_forward(tmp);
  std::copy(out.begin(), out.end() - 1, a.out);
}

void writes_nan(const LayernormForwardArgs& a, const Launch&) {
  reference::layernorm_forward(a);
  a.rstd[1] = kNaN;
}

void modifies_input(const LayernormForwardArgs& a, const Launch&) {
  reference::layernorm_forward(a);
  const_cast<float*>(a.inp)[0] += 1.0f;
}

void drifts(const LayernormForwardArgs& a, const Launch&) {
  static int calls = 0;
  reference::layernorm_forward(a);
  a.out[0] += (calls++ % 2) * 1e-7f;  // within tolerance, but not bitwise repeatable
}

void fails_later(const LayernormForwardArgs& a, const Launch&) {
  static int calls = 0;
  reference::layernorm_forward(a);
  if (++calls > 2) a.out[0] = 1e6f;  // right twice, wrong once it has been timed
}

void throws(const LayernormForwardArgs&, const Launch&) { throw BackendError("kernel launch failed: test"); }

void unsupported(const LayernormForwardArgs&, const Launch&) { throw Unsupported("the library has no algorithm"); }

Variant variant(void (*fn)(const LayernormForwardArgs&, const Launch&), std::string name) {
  return testing::test_variant(fn, "layernorm_forward", std::move(name));
}

class Harness : public ::testing::Test {
 protected:
  Harness()
      : ex_(make_executor(Backend::cpu)),
        op_(Registry::global().op("layernorm_forward")),
        session_(Registry::global(), op_, parse_shape("B=3,T=5,C=24"), 1234, *ex_) {}

  Record evaluate(const Variant& v) {
    EvalOptions o;
    return session_.evaluate(v, v.default_params(), o);
  }

  std::unique_ptr<Executor> ex_;
  const OpSpec& op_;
  Session session_;
};

TEST_F(Harness, CorrectVariantPasses) {
  const Record r = evaluate(variant(&correct, "correct"));
  EXPECT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_EQ(r.deterministic, true);
  ASSERT_EQ(r.errors.size(), 3u);  // out, mean, rstd
  EXPECT_EQ(r.errors[0].tensor, "out");
  EXPECT_EQ(r.errors[0].count, 3 * 5 * 24);
}

TEST_F(Harness, WrongValueIsCaught) {
  const Record r = evaluate(variant(&off_by_a_little, "wrong"));
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_EQ(r.errors[0].mismatches, 1);
  EXPECT_EQ(r.errors[0].first_bad, 5);
  EXPECT_NE(r.reason.find("out: 1 of 360"), std::string::npos) << r.reason;
}

TEST_F(Harness, UnwrittenElementIsCaughtByPoisoning) {
  const Record r = evaluate(variant(&leaves_one_unwritten, "unwritten"));
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_EQ(r.errors[0].first_bad, 3 * 5 * 24 - 1);
  EXPECT_EQ(r.errors[0].non_finite, 1);
}

TEST_F(Harness, NanNeverPasses) {
  const Record r = evaluate(variant(&writes_nan, "nan"));
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_EQ(r.errors[2].tensor, "rstd");
  EXPECT_EQ(r.errors[2].non_finite, 1);
}

TEST_F(Harness, ModifiedInputIsCaught) {
  const Record r = evaluate(variant(&modifies_input, "modifies"));
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_NE(r.reason.find("input 'inp' was modified"), std::string::npos) << r.reason;
}

TEST_F(Harness, NonRepeatableResultsAreReportedNondeterministic) {
  Variant v = variant(&drifts, "drifts");
  v.deterministic = [](const ParamValues&) { return false; };
  const Record r = evaluate(v);
  EXPECT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_EQ(r.deterministic, false);
}

TEST_F(Harness, AVariantThatClaimsDeterminismAndDriftsIsIncorrect) {
  const Record r = evaluate(variant(&drifts, "drifts"));
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_NE(r.reason.find("claims to be deterministic"), std::string::npos) << r.reason;
}

TEST_F(Harness, RevalidatesAfterTheLaunchLoop) {
  const Record r = evaluate(variant(&fails_later, "fails_later"));
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_NE(r.reason.find("after the timing loop"), std::string::npos) << r.reason;
}

TEST_F(Harness, BackendErrorsBecomeIncorrectRecords) {
  const Record r = evaluate(variant(&throws, "throws"));
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_NE(r.reason.find("kernel launch failed"), std::string::npos);
}

TEST_F(Harness, RunTimeUnsupportedIsSkippedNotIncorrect) {
  const Record r = evaluate(variant(&unsupported, "unsupported"));
  EXPECT_EQ(r.status, Status::skipped);
  EXPECT_EQ(r.reason, "the library has no algorithm");
  EXPECT_FALSE(r.deterministic);
}

TEST_F(Harness, UnmetRequirementIsSkippedWithItsReason) {
  Variant v = variant(&correct, "picky");
  v.requirements = {{"C % 7 == 0", [](const Shape& s) { return s.C % 7 == 0; }}};
  const Record r = evaluate(v);
  EXPECT_EQ(r.status, Status::skipped);
  EXPECT_EQ(r.reason, "requires C % 7 == 0");
}

TEST_F(Harness, TimedEvaluationRecordsStatistics) {
  EvalOptions o;
  o.timer = cli::timer_for(*ex_, testing::brief_timing(3));
  const Variant v = variant(&correct, "correct");
  const Record r = session_.evaluate(v, v.default_params(), o);
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_TRUE(r.timing);
  EXPECT_EQ(r.timing->repetitions, 3);
  EXPECT_GT(r.timing->iterations, 0);
  EXPECT_GT(r.timing->median_s, 0);
  EXPECT_LE(r.timing->min_s, r.timing->median_s);
  EXPECT_GT(r.gbps(), 0);
}

TEST(Problem, InputsAreFreshRandomAndReproducible) {
  const OpSpec& op = Registry::global().op("encoder_forward");
  const Shape s = parse_shape("B=2,T=16,C=8,V=50");
  const Problem a(Registry::global(), op, s, 7), b(Registry::global(), op, s, 7), c(Registry::global(), op, s, 8);
  const auto* wte_a = static_cast<const float*>(a.initial.buffers[2].data());
  const auto* wte_b = static_cast<const float*>(b.initial.buffers[2].data());
  const auto* wte_c = static_cast<const float*>(c.initial.buffers[2].data());
  int zeros = 0, same = 0, differ = 0;
  for (int i = 0; i < 50 * 8; ++i) {
    zeros += wte_a[i] == 0.0f;
    same += wte_a[i] == wte_b[i];
    differ += wte_a[i] != wte_c[i];
  }
  EXPECT_EQ(zeros, 0);
  EXPECT_EQ(same, 400);
  EXPECT_GT(differ, 390);
  const auto* tokens = static_cast<const int32_t*>(a.initial.buffers[1].data());
  for (int i = 0; i < 32; ++i) {
    EXPECT_GE(tokens[i], 0);
    EXPECT_LT(tokens[i], 50);
  }
}

TEST(Problem, PreparedInputsAreConsistent) {
  // crossentropy_forward's probs are proper distributions over the first V columns.
  const OpSpec& op = Registry::global().op("crossentropy_forward");
  const Shape s = parse_shape("B=2,T=3,V=10,Vp=16");
  const Problem p(Registry::global(), op, s, 3);
  const auto* probs = static_cast<const float*>(p.initial.buffers[1].data());
  for (int row = 0; row < 6; ++row) {
    double sum = 0;
    for (int i = 0; i < 10; ++i) sum += probs[row * 16 + i];
    EXPECT_NEAR(sum, 1.0, 1e-5);
    for (int i = 10; i < 16; ++i) EXPECT_EQ(probs[row * 16 + i], 0.0f);
  }
}

TEST(Problem, ShapesTheOpCannotTakeAreUsageErrors) {
  const OpSpec& op = Registry::global().op("attention_forward");
  EXPECT_THROW(Problem(Registry::global(), op, parse_shape("B=1,T=4,C=10,NH=3"), 1), UsageError);
}

TEST(Compare, ToleranceIsInclusiveAndNanFails) {
  TensorSpec spec = output("x", "B", ToleranceFn{});
  const float ref[4] = {1.0f, -2.0f, 0.0f, 4.0f};
  const float got[4] = {1.5f, -2.0f, 0.25f, kNaN};
  const TensorCheck c = compare(spec, got, ref, 4, Tolerance{0.25, 0.25});
  EXPECT_EQ(c.mismatches, 1);  // 1.5 vs 1: 0.5 <= 0.25 + 0.25; 0.25 vs 0: 0.25 <= 0.25; NaN fails
  EXPECT_EQ(c.non_finite, 1);
  EXPECT_EQ(c.first_bad, 3);
  EXPECT_DOUBLE_EQ(c.max_abs_err, 0.5);
  EXPECT_FALSE(c.passed());
  const float nan_ref[1] = {kNaN};
  const float one[1] = {1.0f};
  EXPECT_FALSE(compare(spec, one, nan_ref, 1, Tolerance{1e9, 1e9}).passed());
}

// bf16 outputs against an fp32 reference: half an ulp for one rounding, and the bias test.
class CompareBf16 : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937 rng(12);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : ref) x = u(rng) * scale;
  }
  TensorCheck check(bf16 (*round)(float), Tolerance tol) {
    std::vector<bf16> got(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) got[i] = round(ref[i]);
    return compare(spec, got.data(), DType::f32, ref.data(), int64_t(ref.size()), tol);
  }
  TensorSpec spec = as_bf16(output("y", "B", ToleranceFn{}));
  std::vector<float> ref = std::vector<float>(4096);
  float scale = 1.0f;
};

TEST_F(CompareBf16, RoundingToNearestIsWithinHalfAnUlpAndUnbiased) {
  const TensorCheck c = check(&to_bf16, Tolerance{0, 0, 0.5});
  EXPECT_TRUE(c.passed()) << c.describe();
  ASSERT_TRUE(c.bias_ulps);
  EXPECT_LT(std::fabs(*c.bias_ulps), 0.05) << c.describe();
  EXPECT_EQ(c.bias_elements, 4096);
}

TEST_F(CompareBf16, TruncationFailsHalfAnUlp) {
  const TensorCheck c = check(&to_bf16_rz, Tolerance{0, 0, 0.5});
  EXPECT_FALSE(c.passed());
  EXPECT_GT(c.mismatches, 1000) << c.describe();
  EXPECT_NEAR(*c.bias_ulps, -0.5, 0.05) << "toward zero: about half an ulp";
}

TEST_F(CompareBf16, TruncationWithinTheToleranceIsCaughtByTheBias) {
  // Half the outputs one bit past bf16 (a bf16 plus half its ulp, as the sum of two
  // bf16 often is), the rest exact: truncation errs by exactly half an ulp or nothing,
  // always within half an ulp; only the bias test sees that the errors all point one way.
  std::mt19937 rng(5);
  for (float& x : ref) {
    const float b = to_float(to_bf16(x));
    x = rng() % 2 ? b + 0.5f * float(bf16_ulp(b)) : b;
  }
  const TensorCheck c = check(&to_bf16_rz, Tolerance{0, 0, 0.5});
  EXPECT_EQ(c.mismatches, 0) << c.describe();
  EXPECT_TRUE(c.biased());
  EXPECT_FALSE(c.passed());
  EXPECT_NE(c.describe().find("biased: the mean signed error is -0.2"), std::string::npos) << c.describe();
  // Rounding to nearest even, ties half up and half down, passes.
  EXPECT_TRUE(check(&to_bf16, Tolerance{0, 0, 0.5}).passed());
}

TEST_F(CompareBf16, TheBiasTestLeavesOutWhereTheFp32ToleranceOutweighsTheRounding) {
  // Outputs near zero held to an absolute floor far above their ulp (a summed gradient's,
  // a GELU's cancelling tail): the fp32 error the tolerance allows there is many ulps and
  // may lean one way, so those elements say nothing about the rounding; the elementwise
  // check holds them.
  scale = 1e-3f;
  SetUp();
  const TensorCheck loose = check(&to_bf16_rz, Tolerance{1e-4, 0, 0.5});
  EXPECT_EQ(loose.bias_elements, 0) << loose.describe();
  EXPECT_TRUE(loose.passed()) << loose.describe();
  // With a floor of a quarter of their ulp or less, they count (and truncation fails).
  const TensorCheck tight = check(&to_bf16_rz, Tolerance{1e-9, 0, 0.5});
  EXPECT_GT(tight.bias_elements, 4000) << tight.describe();  // all but the few nearest zero
  EXPECT_TRUE(tight.biased()) << tight.describe();
}

TEST_F(CompareBf16, TheBiasTestNeedsEnoughElements) {
  ref.resize(kBiasMinElements - 1);
  const TensorCheck c = check(&to_bf16_rz, Tolerance{1.0, 0, 0});
  EXPECT_TRUE(c.passed()) << "too few elements for the bias test: " << c.describe();
}

// The row test: rows of C values, four rows, the last a thousand times smaller than the
// others and so inside an absolute tolerance sized for the large ones.
class CompareRows : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = u(rng) * (i / kC == 3 ? 1e-3f : 1.0f);
    got = ref;
  }
  TensorCheck check(const TensorSpec& tensor, NumericClass numeric, Tolerance tol) const {
    return compare(tensor, got.data(), ref.data(), int64_t(ref.size()), tol,
                   row_rule(tensor, parse_shape("B=4,C=64"), numeric));
  }
  static constexpr std::size_t kC = 64;
  TensorSpec spec = output("y", "B,C", ToleranceFn{});
  std::vector<float> ref = std::vector<float>(4 * kC);
  std::vector<float> got;
};

TEST_F(CompareRows, TheRuleFollowsTheLastExtentAndTheCoarserOfArithmeticAndStorage) {
  const Shape s = parse_shape("B=2,T=3,C=8");
  const RowRule qkv = row_rule(output("dqkv", "B,T,3C", ToleranceFn{}), s, NumericClass::fp32);
  EXPECT_EQ(qkv.length, 8) << "one row per part of 3C: a token's q, k and v";
  EXPECT_EQ(qkv.parts, 3);
  EXPECT_DOUBLE_EQ(qkv.bound, std::ldexp(1.0, -12));  // sqrt(2^-24)
  EXPECT_DOUBLE_EQ(qkv.floor, 16 * std::ldexp(1.0, -24));
  EXPECT_DOUBLE_EQ(row_rule(output("y", "B,T,C", ToleranceFn{}), s, NumericClass::tf32).bound,
                   std::sqrt(std::ldexp(1.0, -11)));
  const RowRule stored = row_rule(as_bf16(output("y", "B,T,C", ToleranceFn{})), s, NumericClass::fp32);
  EXPECT_DOUBLE_EQ(stored.bound, 1.0 / 16) << "bf16 storage rounds to 2^-8 whatever the arithmetic";
  EXPECT_EQ(row_rule(output("out", "1", ToleranceFn{}), s, NumericClass::fp32).length, 1);
  EXPECT_EQ(row_rule(output("n", "B,T", ToleranceFn{}), s, NumericClass::fp32).length, 3);
}

TEST_F(CompareRows, AZeroRowOfSmallMagnitudeFails) {
  for (std::size_t i = 3 * kC; i < 4 * kC; ++i) got[i] = 0;
  const TensorCheck c = check(spec, NumericClass::fp32, Tolerance{1e-2, 1e-5});
  EXPECT_EQ(c.mismatches, 0) << "every element within the absolute tolerance: " << c.describe();
  EXPECT_EQ(c.rows_checked, 4);
  EXPECT_EQ(c.rows_failed, 1);
  EXPECT_EQ(c.first_bad_row, 3);
  EXPECT_DOUBLE_EQ(c.first_bad_row_rel_err, 1.0);
  EXPECT_FALSE(c.passed());
  EXPECT_NE(c.describe().find("y: 1 of 4 rows of 64 off by more than 2.4e-04 of their norm (first: row 3, relative "
                              "error 1); every element within atol 1.0e-02"),
            std::string::npos)
      << c.describe();
  // The same check without the row test passes: what the rule adds.
  EXPECT_TRUE(compare(spec, got.data(), ref.data(), int64_t(ref.size()), Tolerance{1e-2, 1e-5}).passed());
}

TEST_F(CompareRows, AnotherRowsValuesFail) {
  for (std::size_t i = 0; i < kC; ++i) got[3 * kC + i] = ref[2 * kC + i] * 1e-3f;  // the right size, the wrong row
  const TensorCheck c = check(spec, NumericClass::fp32, Tolerance{1e-2, 1e-2});
  EXPECT_EQ(c.mismatches, 0) << c.describe();
  EXPECT_EQ(c.first_bad_row, 3) << c.describe();
  EXPECT_GT(c.first_bad_row_rel_err, 0.5) << c.describe();
}

TEST_F(CompareRows, CorrectRowsWithRoundingNoisePass) {
  // bf16 storage: every value rounded once, the small row included.
  const TensorSpec stored = as_bf16(spec);
  std::vector<bf16> rounded(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) rounded[i] = to_bf16(ref[i]);
  const TensorCheck b =
      compare(stored, rounded.data(), DType::f32, ref.data(), int64_t(ref.size()), Tolerance{1e-2, 1e-2, 0.5},
              row_rule(stored, parse_shape("B=4,C=64"), NumericClass::bf16));
  EXPECT_TRUE(b.passed()) << b.describe();
  EXPECT_EQ(b.rows_checked, 4);
  EXPECT_LT(b.max_row_rel_err, std::ldexp(1.0, -8)) << "about half an ulp relative, well inside 2^-4";
  // fp32: every element off by its full rtol (1e-5) passes, since the bound (2^-12) is
  // wider than any class's rtol.
  for (std::size_t i = 0; i < ref.size(); ++i) got[i] = ref[i] * (1 + (i % 2 ? 1e-5f : -1e-5f));
  const TensorCheck f = check(spec, NumericClass::fp32, Tolerance{0, 1.01e-5});
  EXPECT_TRUE(f.passed()) << f.describe();
  EXPECT_GT(f.row_tol_used, 0.01) << f.describe();
}

TEST_F(CompareRows, ARowThatCancelsToRoundingNoiseIsHeldToTheFloor) {
  // Row 3 is the rounding noise of a sum of terms the size of the other rows (the first
  // query's dQ: dP - D cancels), and the output's noise differs from the reference's:
  // relative error near 1, but far below 16 u of the largest row.
  for (std::size_t i = 3 * kC; i < 4 * kC; ++i) {
    ref[i] = 3e-8f * (i % 3 ? 1.0f : -1.0f);
    got[i] = -2e-8f * (i % 2 ? 1.0f : -1.0f);
  }
  const TensorCheck c = check(spec, NumericClass::fp32, Tolerance{1e-5, 1e-5});
  EXPECT_TRUE(c.passed()) << c.describe();
}

TEST_F(CompareRows, AnAllZeroReferenceRowPassesWhenTheOutputIsZero) {
  for (std::size_t i = kC; i < 2 * kC; ++i) ref[i] = got[i] = 0;
  const TensorCheck c = check(spec, NumericClass::fp32, Tolerance{1e-5, 1e-5});
  EXPECT_TRUE(c.passed()) << c.describe();
  EXPECT_EQ(c.rows_checked, 3) << "the zero row is left to the elementwise test";
  // A stray value in it is the elementwise test's to judge: within atol it passes.
  got[kC + 5] = 5e-6f;
  EXPECT_TRUE(check(spec, NumericClass::fp32, Tolerance{1e-5, 1e-5}).passed());
  got[kC + 5] = 1.0f;
  EXPECT_FALSE(check(spec, NumericClass::fp32, Tolerance{1e-5, 1e-5}).passed());
}

TEST_F(CompareRows, NanStillFails) {
  got[2 * kC + 1] = kNaN;
  const TensorCheck c = check(spec, NumericClass::fp32, Tolerance{1e9, 1e9});
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.non_finite, 1);
  EXPECT_EQ(c.rows_failed, 1) << "a NaN makes its row's error NaN, which no bound holds";
  EXPECT_EQ(c.first_bad_row, 2);
}

TEST_F(CompareRows, APartOfARowIsARow) {
  // dqkv-like rows of 3C: q small, k and v large. Zeroing q alone fails, though q is a
  // small share of the whole 3C row.
  const TensorSpec qkv = output("dqkv", "B,3C", ToleranceFn{});
  const Shape s = parse_shape("B=4,C=16");
  std::vector<float> r(4 * 48), g;
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = (i % 48 < 16 ? 1e-3f : 1.0f) * float(1 + i % 7);
  g = r;
  for (std::size_t i = 3 * 48; i < 3 * 48 + 16; ++i) g[i] = 0;
  const TensorCheck c =
      compare(qkv, g.data(), r.data(), int64_t(r.size()), Tolerance{1e-2, 1e-2}, row_rule(qkv, s, NumericClass::bf16));
  EXPECT_EQ(c.mismatches, 0) << c.describe();
  EXPECT_EQ(c.first_bad_row, 9) << "token 3's q row: " << c.describe();
}

}  // namespace
}  // namespace wb
