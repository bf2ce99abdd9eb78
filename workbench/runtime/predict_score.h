#pragma once
// The prediction scored against a device's measured times, and its constants fitted to
// them (workbench/runtime/predict.h): what `wb predict` prints. A fit is scored on what
// it was fitted to (in sample) and, leave-one-op-out, on each op by constants fitted
// without it (out of sample), side by side.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "workbench/runtime/predict.h"

namespace wb {

// One measured configuration as the model sees it.
struct ScoredPoint {
  std::string op;                    // what leave-one-op-out leaves out
  std::string pair;                  // its (op, shape): what picks and ranks are scored within
  std::optional<Counters> counters;  // nullopt: a variant the emulator cannot run
  double bytes = 0, flops = 0;       // the op's models at its shape
  NumericClass numeric = NumericClass::fp32;
  double measured_s = 0;                      // the measured median
  NumericClass library = NumericClass::fp32;  // library_class's (predict.h)
};

// The constants that minimise the mean absolute percentage error over the points (the
// score they are judged by: a fit to the mean |log(predicted / measured)| counted an
// overestimate by some factor the same as an underestimate by it, which MAPE does not,
// and scored 2.0 points worse out of sample on the H200's sweep), plus `shrinkage` times
// the mean over the fitted constants of ln(constant / its value in start)^2: a pull
// toward the prior, which a constant the points cannot tell apart gives in to (fitted
// freely, such constants followed what the other ops' errors asked of them, and scored
// worse out of sample than the prior itself). From `start`, each constant varied in turn
// by factors of up to 4 until none improves it (a coordinate descent: deterministic, a
// fraction of a second for a sweep's points). Constants named in `fixed` keep their value
// in `start`.
ModelConstants fit_constants(const std::vector<ScoredPoint>& points, const DeviceModel& device,
                             const ModelConstants& start = {}, const std::set<std::string>& fixed = {},
                             double shrinkage = 0);

// The shrinkages a fit chooses among, weakest first (0: a plain fit).
inline const std::vector<double> kShrinkages{0, 0.03, 0.1, 0.3, 1};

// The shrinkage of kShrinkages whose fits, leave-one-op-out over these points, score the
// lowest MAPE (the weakest on a tie); 0 for points of fewer than two ops.
double choose_shrinkage(const std::vector<ScoredPoint>& points, const DeviceModel& device,
                        const ModelConstants& start = {}, const std::set<std::string>& fixed = {});

// Per point, the prediction of constants fitted to every other op's points, at
// `shrinkage`, or where it is nullopt with the shrinkage choose_shrinkage finds among
// those other ops alone (a nested choice: the held-out op has no say in it).
std::vector<double> leave_one_op_out(const std::vector<ScoredPoint>& points, const DeviceModel& device,
                                     const ModelConstants& start = {}, const std::set<std::string>& fixed = {},
                                     std::optional<double> shrinkage = std::nullopt);

struct PairScore {
  std::string pair;
  std::size_t configurations = 0;
  double mape = 0;  // mean |predicted - measured| / measured
  // Spearman's rank correlation over the configurations whose measured times differ by
  // more than 2% (of two closer ones only the faster counts: they are within the noise);
  // nullopt for fewer than 3 such.
  std::optional<double> spearman;
  std::size_t distinct = 0;        // the configurations the Spearman coefficient ranks
  std::size_t best = 0, pick = 0;  // indices (in the pair's points) of the measured and predicted fastest
  double pick_ratio = 1;           // the pick's measured time over the best's
  bool pick_within_5 = false;
  bool best_in_top3 = false;  // the measured best among the three predicted fastest
};

struct Scores {
  std::vector<PairScore> pairs;  // in the points' order of first appearance
  double mape = 0;               // over every point
  std::size_t picks_within_5 = 0, best_in_top3 = 0;
  double lowest_spearman = 1;  // over the pairs that have one
};

// predicted[i] is points[i]'s prediction.
Scores score(const std::vector<ScoredPoint>& points, const std::vector<double>& predicted);

}  // namespace wb
