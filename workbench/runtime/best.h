#pragma once
// Choosing the best variant per op and shape from reports: `wb best` and best.json
// ("schema": "wb.best/1", documented in results/README.md).
//
// Among the correct, timed records of an allowed numeric class, each variant's fastest
// launch configuration is its candidate. Candidates are then taken in order of id,
// simplest first: a variant only takes over from the one chosen so far when it is
// faster by more than the noise of both measurements (the sum of their standard
// deviations) and by at least 1%. Otherwise the simpler one stays.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "workbench/runtime/report.h"

namespace wb {

inline constexpr const char* kBestSchema = "wb.best/1";
inline constexpr double kMinWinningMargin = 0.01;

// fp32 runs fp32 variants only; tf32 also tf32 ones; bf16 all three.
bool allowed_in(NumericClass variant, NumericClass precision);

struct BestEntry {
  std::string op;
  std::vector<std::string> dims;
  Shape shape;
  int variant = 0;
  std::string variant_name;
  NumericClass numeric = NumericClass::fp32;
  ParamValues params;
  double median_s = 0;
  double stddev_s = 0;
  std::string report;       // the report the winning record came from
  std::string source_hash;  // of the variant when it was measured
  std::string note;         // why it won, or which faster variant it was kept over

  std::string shape_text() const { return describe(shape, dims); }
};

struct BestFile {
  std::string created;
  Backend backend = Backend::cpu;
  std::string device_name;
  std::string device_slug;
  NumericClass precision = NumericClass::fp32;
  std::vector<std::string> reports;
  std::vector<BestEntry> entries;  // in the order of first appearance in the reports

  // The entry for op at exactly this shape (its dims), or nullptr.
  const BestEntry* find(const std::string& op, const Shape& shape) const;
};

// Throws UsageError when the reports come from different devices or backends.
BestFile choose_best(const std::vector<std::pair<std::string, Report>>& reports, NumericClass precision);

nlohmann::json to_json(const BestFile& b);
BestFile best_from_json(const nlohmann::json& j, const std::string& origin);  // throws UsageError
void write_best(const BestFile& b, const std::string& path);
BestFile read_best(const std::string& path);  // throws UsageError

}  // namespace wb
