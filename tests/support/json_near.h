#pragma once
// Equal JSON, numbers within a relative 1e-12: times pass through microseconds on
// their way into files and back, which can move the last bit.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace wb::testing {

inline bool json_near(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) <= 1e-12 * std::max(std::abs(x), std::abs(y));
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key()) || !json_near(it.value(), b.at(it.key()))) return false;
    return true;
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!json_near(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

}  // namespace wb::testing
