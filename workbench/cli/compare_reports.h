#pragma once
// Comparing two reports record by record: `wb compare`, the CI regression gate.
//
// Records are matched by op, backend, variant, launch parameters and shape. For two
// timed records the difference of the medians is weighed against the noise of both
// (the sum of their standard deviations): within it the verdict is SAME, beyond it
// FASTER or SLOWER. A SLOWER record is a regression when it is also slower by more than
// the allowed slowdown; so is a record that was correct and is now incorrect. A
// comparison in which no record of the baseline ran again (all GONE, skipped or never
// run) fails as well: a new report that measured nothing proves nothing.
//
// Records that both carry the emulator's counters (wb check --backend emu --counters)
// are also compared on them, which have no noise: global sectors per request, excess
// shared wavefronts (bank conflicts) per shared request, and the lowest theoretical
// occupancy on sm_80 and sm_90. One of them worse by more than the allowed increase is a
// regression (WORSE, naming the site that got worse most); all of them better, BETTER.
#include <optional>
#include <string>
#include <vector>

#include "workbench/runtime/report.h"

namespace wb {

enum class Verdict { faster, same, slower, added, gone, now_incorrect, worse, better };
// FASTER, SAME, SLOWER, NEW, GONE, NOW-INCORRECT; WORSE and BETTER: the counters
std::string_view to_string(Verdict v);

struct Comparison {
  std::string op, variant, params, shape;  // the key, for display
  std::optional<double> base_s, new_s;     // medians, when timed
  Verdict verdict = Verdict::same;
  bool regression = false;
  std::string note;
  double change() const { return base_s && new_s && *base_s > 0 ? *new_s / *base_s - 1.0 : 0.0; }
};

struct CompareResult {
  std::vector<Comparison> rows;
  double max_slowdown = 0.05;
  double max_counter_increase = 0.0;
  int rerun = 0;  // records of the baseline that ran again in the new report (ok or incorrect)
  int count(Verdict v) const;
  int regressions() const;
  bool passed() const { return regressions() == 0 && rerun > 0; }
  std::string summary() const;
};

// Throws UsageError when the reports come from different devices or backends, or when
// either has no records.
CompareResult compare_reports(const Report& base, const Report& now, double max_slowdown,
                              double max_counter_increase = 0.0);

std::string format_text(const CompareResult& r);
std::string format_markdown(const CompareResult& r);

}  // namespace wb
