#include "workbench/runtime/predict_score.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace wb {

namespace {

// The fit's objective: MAPE, plus the shrinkage's pull toward `start` (predict_score.h).
double loss(const std::vector<const ScoredPoint*>& points, const DeviceModel& d, const ModelConstants& m,
            const ModelConstants& start, const std::vector<const ModelConstants::Named*>& fitted, double shrinkage) {
  double total = 0;
  for (const ScoredPoint* p : points) {
    const double t = predict_time(p->counters, p->bytes, p->flops, p->numeric, p->library, d, m).seconds;
    total += std::abs(t / p->measured_s - 1);
  }
  double pull = 0;
  if (shrinkage > 0)
    for (const ModelConstants::Named* c : fitted)
      if (start.*c->value > 0) pull += std::pow(std::log(m.*c->value / (start.*c->value)), 2);
  return (points.empty() ? 0 : total / double(points.size())) +
         (fitted.empty() ? 0 : shrinkage * pull / double(fitted.size()));
}

ModelConstants fit(const std::vector<const ScoredPoint*>& points, const DeviceModel& d, const ModelConstants& start,
                   const std::set<std::string>& fixed, double shrinkage) {
  // Factors tried on a constant in each round: coarse first, then fine, so that a round
  // moves far where the loss is flat and settles where it is not.
  static const double kFactors[] = {0.25, 0.5, 0.7, 0.85, 0.95, 1.05, 1.2, 1.5, 2, 4};
  std::vector<const ModelConstants::Named*> fitted;
  for (const ModelConstants::Named& c : ModelConstants::all())
    if (c.fitted && !fixed.count(c.name)) fitted.push_back(&c);
  ModelConstants m = start;
  double best = loss(points, d, m, start, fitted, shrinkage);
  for (int round = 0; round < 8; ++round) {
    bool improved = false;
    for (const ModelConstants::Named* c : fitted) {
      const double was = m.*c->value;
      double chosen = was;
      for (double f : kFactors) {
        m.*c->value = was * f;
        const double l = loss(points, d, m, start, fitted, shrinkage);
        if (l < best - 1e-12) best = l, chosen = m.*c->value, improved = true;
      }
      m.*c->value = chosen;
    }
    if (!improved) break;
  }
  return m;
}

double choose(const std::vector<const ScoredPoint*>& points, const DeviceModel& d, const ModelConstants& start,
              const std::set<std::string>& fixed);

// Each op's points predicted by constants fitted to the others' at `shrinkage`, or with
// the shrinkage chosen among the others (nested) when it is negative.
std::vector<double> held_out(const std::vector<const ScoredPoint*>& points, const DeviceModel& d,
                             const ModelConstants& start, const std::set<std::string>& fixed, double shrinkage) {
  std::vector<double> predicted(points.size(), 0);
  std::map<std::string, std::vector<std::size_t>> by_op;
  for (std::size_t i = 0; i < points.size(); ++i) by_op[points[i]->op].push_back(i);
  for (const auto& [op, held] : by_op) {
    std::vector<const ScoredPoint*> others;
    for (const ScoredPoint* p : points)
      if (p->op != op) others.push_back(p);
    const double s = shrinkage < 0 ? choose(others, d, start, fixed) : shrinkage;  // nested: without the held-out op
    const ModelConstants m = fit(others, d, start, fixed, s);
    for (std::size_t i : held) {
      const ScoredPoint& p = *points[i];
      predicted[i] = predict_time(p.counters, p.bytes, p.flops, p.numeric, p.library, d, m).seconds;
    }
  }
  return predicted;
}

// choose_shrinkage's (predict_score.h).
double choose(const std::vector<const ScoredPoint*>& points, const DeviceModel& d, const ModelConstants& start,
              const std::set<std::string>& fixed) {
  std::set<std::string> ops;
  for (const ScoredPoint* p : points) ops.insert(p->op);
  if (ops.size() < 2) return 0;
  double chosen = 0, lowest = 0;
  for (double s : kShrinkages) {
    const std::vector<double> predicted = held_out(points, d, start, fixed, s);
    double mape = 0;
    for (std::size_t i = 0; i < points.size(); ++i) mape += std::abs(predicted[i] / points[i]->measured_s - 1);
    if (s == kShrinkages.front() || mape < lowest - 1e-12) lowest = mape, chosen = s;
  }
  return chosen;
}

std::vector<const ScoredPoint*> pointers(const std::vector<ScoredPoint>& points) {
  std::vector<const ScoredPoint*> out;
  for (const ScoredPoint& p : points) out.push_back(&p);
  return out;
}

}  // namespace

ModelConstants fit_constants(const std::vector<ScoredPoint>& points, const DeviceModel& d, const ModelConstants& start,
                             const std::set<std::string>& fixed, double shrinkage) {
  return fit(pointers(points), d, start, fixed, shrinkage);
}

double choose_shrinkage(const std::vector<ScoredPoint>& points, const DeviceModel& d, const ModelConstants& start,
                        const std::set<std::string>& fixed) {
  return choose(pointers(points), d, start, fixed);
}

std::vector<double> leave_one_op_out(const std::vector<ScoredPoint>& points, const DeviceModel& d,
                                     const ModelConstants& start, const std::set<std::string>& fixed,
                                     std::optional<double> shrinkage) {
  return held_out(pointers(points), d, start, fixed, shrinkage.value_or(-1));
}

Scores score(const std::vector<ScoredPoint>& points, const std::vector<double>& predicted) {
  Scores s;
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!members.count(points[i].pair)) order.push_back(points[i].pair);
    members[points[i].pair].push_back(i);
  }
  double total = 0;
  for (const std::string& pair : order) {
    const std::vector<std::size_t>& idx = members[pair];
    PairScore ps;
    ps.pair = pair;
    ps.configurations = idx.size();
    double sum = 0;
    for (std::size_t i : idx) sum += std::abs(predicted[i] - points[i].measured_s) / points[i].measured_s;
    total += sum;
    ps.mape = sum / double(idx.size());
    std::vector<std::size_t> by_measured(idx.size()), by_predicted(idx.size());
    std::iota(by_measured.begin(), by_measured.end(), 0);
    by_predicted = by_measured;
    auto measured = [&](std::size_t k) { return points[idx[k]].measured_s; };
    auto forecast = [&](std::size_t k) { return predicted[idx[k]]; };
    std::stable_sort(by_measured.begin(), by_measured.end(),
                     [&](std::size_t a, std::size_t b) { return measured(a) < measured(b); });
    std::stable_sort(by_predicted.begin(), by_predicted.end(),
                     [&](std::size_t a, std::size_t b) { return forecast(a) < forecast(b); });
    ps.best = by_measured.front();
    ps.pick = by_predicted.front();
    ps.pick_ratio = measured(ps.pick) / measured(ps.best);
    ps.pick_within_5 = ps.pick_ratio <= 1.05;
    for (std::size_t k = 0; k < std::min<std::size_t>(3, by_predicted.size()); ++k)
      ps.best_in_top3 = ps.best_in_top3 || measured(by_predicted[k]) == measured(ps.best);
    // The configurations more than 2% apart in measured time, fastest first.
    std::vector<double> m, p;
    for (std::size_t k : by_measured)
      if (m.empty() || measured(k) > 1.02 * m.back()) m.push_back(measured(k)), p.push_back(forecast(k));
    ps.distinct = m.size();
    if (m.size() >= 3) {
      ps.spearman = rank_correlation(p, m);
      s.lowest_spearman = std::min(s.lowest_spearman, *ps.spearman);
    }
    s.picks_within_5 += ps.pick_within_5;
    s.best_in_top3 += ps.best_in_top3;
    s.pairs.push_back(ps);
  }
  s.mape = points.empty() ? 0 : total / double(points.size());
  return s;
}

}  // namespace wb
