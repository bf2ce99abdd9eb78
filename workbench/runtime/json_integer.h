#pragma once
// Integers read from the JSON files wb reads: best.json, reports, workloads files.
// nlohmann's get<int>() converts whatever number it finds -- a float outside the range
// of int is undefined behaviour, an integer outside it wraps -- so a reader takes an
// integer only through json_integer, which names the field and the value it refuses.
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/errors.h"

namespace wb {

// The integer v holds when it is one in [lo, hi]: a JSON integer, or a float of
// integral value (2.0, 1e3). Anything else -- a fraction, a number out of range, a
// string, true, null -- throws UsageError "<where> is <v>, not an integer in [lo, hi]".
inline int64_t json_integer(const nlohmann::json& v, const std::string& where, int64_t lo, int64_t hi) {
  std::optional<int64_t> x;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u <= uint64_t(std::numeric_limits<int64_t>::max())) x = int64_t(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else if (v.is_number_float()) {
    // [-2^63, 2^63) holds the doubles that convert to int64_t; NaN and inf are outside.
    const double d = v.get<double>();
    if (d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d)) x = int64_t(d);
  }
  if (!x || *x < lo || *x > hi)
    throw UsageError(where + " is " + v.dump() + ", not an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  return *x;
}

}  // namespace wb
