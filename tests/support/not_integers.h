#pragma once
// What the readers of wb's JSON files (best.json, reports, workloads files) must
// refuse where they read an integer in a range, and what their messages say of it.
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace wb::testing {

constexpr uint64_t kIntMax = std::numeric_limits<int>::max();
constexpr uint64_t kInt64Max = std::numeric_limits<int64_t>::max();

// An integer field of a file: where it is, what the reader's messages call it, and its
// range [lo, top].
struct IntegerField {
  std::string pointer;  // a JSON pointer
  std::string name;
  uint64_t lo, top;
};

// A value put at `pointer` that the reader must refuse, and the words of its message
// ("<name> is <value>, not an integer in [lo, top]").
struct NotAnInteger {
  std::string pointer;
  nlohmann::json value;
  std::string message;
};

// For each field, one value of each kind that is not an integer in its range: a float
// beyond every integer type (nlohmann's get<int>() once made it undefined behaviour), a
// negative, a fraction, digits in a string, a bool, and top + 1 (a cast once wrapped it).
inline std::vector<NotAnInteger> not_integers(const std::vector<IntegerField>& fields) {
  std::vector<NotAnInteger> out;
  for (const IntegerField& f : fields) {
    const std::string range = "[" + std::to_string(f.lo) + ", " + std::to_string(f.top) + "]";
    const std::pair<nlohmann::json, std::string> values[] = {
        {2.2e81, "2.2e+81"}, {-1, "-1"},     {1.5, "1.5"},
        {"2", "\"2\""},      {true, "true"}, {f.top + 1, std::to_string(f.top + 1)},
    };
    for (const auto& [value, quoted] : values)
      out.push_back({f.pointer, value, f.name + " is " + quoted + ", not an integer in " + range});
  }
  return out;
}

}  // namespace wb::testing
