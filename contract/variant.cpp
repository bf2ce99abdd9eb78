#include "contract/variant.h"

#include <algorithm>
#include <stdexcept>

#include "base/errors.h"
#include "contract/cpu_capabilities.h"
#include "contract/variant_errors.h"

namespace wb {

TuningParam block_size_param(std::vector<int> values, int default_value) {
  return TuningParam{"block_size", std::move(values), default_value};
}

void ParamValues::set(const std::string& name, int value) {
  for (auto& [n, v] : items_) {
    if (n == name) {
      v = value;
      return;
    }
  }
  items_.emplace_back(name, value);
}

std::optional<int> ParamValues::find(std::string_view name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return v;
  return std::nullopt;
}

int ParamValues::get(std::string_view name) const {
  if (auto v = find(name)) return *v;
  throw MissingLaunchParam(std::string(name));
}

std::string ParamValues::describe() const {
  if (items_.empty()) return "-";
  std::string out;
  for (const auto& [n, v] : items_) out += (out.empty() ? "" : ",") + n + "=" + std::to_string(v);
  return out;
}

std::string describe_values(const std::vector<int>& values) {
  bool powers_of_two = values.size() > 2;
  for (size_t i = 1; i < values.size(); ++i) powers_of_two = powers_of_two && values[i] == 2 * values[i - 1];
  if (powers_of_two) return std::to_string(values.front()) + ".." + std::to_string(values.back());
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

ParamValues Variant::default_params() const {
  ParamValues p;
  for (const auto& t : params) p.set(t.name, t.default_value);
  return p;
}

std::vector<ParamValues> Variant::all_params() const {
  std::vector<ParamValues> out{ParamValues{}};
  for (const auto& t : params) {
    std::vector<ParamValues> next;
    for (const auto& partial : out) {
      for (int v : t.values) {
        ParamValues p = partial;
        p.set(t.name, v);
        next.push_back(p);
      }
    }
    out = std::move(next);
  }
  return out;
}

void Variant::check_params(const ParamValues& p) const {
  for (const auto& [param, value] : p.items()) {
    // An init-capture: C++17 does not let a lambda capture a structured binding (clang refuses).
    auto it = std::find_if(params.begin(), params.end(),
                           [&name = param](const TuningParam& t) { return t.name == name; });
    if (it == params.end()) {
      std::string legal;
      for (const auto& t : params) legal += (legal.empty() ? "" : ", ") + t.name;
      throw UsageError(key() + " has no launch parameter '" + param + "' (" +
                       (legal.empty() ? std::string("it has none") : "it has: " + legal) + ")");
    }
    if (std::find(it->values.begin(), it->values.end(), value) == it->values.end()) {
      std::string legal;
      for (int v : it->values) legal += (legal.empty() ? "" : ", ") + std::to_string(v);
      throw UsageError(param + " " + std::to_string(value) + " is not legal for " + key() + " (legal: " + legal + ")");
    }
  }
}

ParamValues Variant::complete(const ParamValues& p) const {
  ParamValues out;
  for (const auto& t : params) out.set(t.name, p.find(t.name).value_or(t.default_value));
  return out;
}

std::optional<std::string> Variant::skip_reason(const Shape& s, const ParamValues& p) const {
  for (const auto& r : requirements) {
    if (r.holds(s)) continue;
    // A CPU capability says what this CPU lacks, not just what the rung needs.
    if (auto c = cpu::capability_of(r))
      if (auto why = cpu::missing(*c)) return why;
    return "requires " + r.text;
  }
  if (launch_limit) return launch_limit(s, p);
  return std::nullopt;
}

std::size_t Variant::workspace_bytes(const Shape& s, const ParamValues& p) const {
  return workspace ? workspace(s, p) : 0;
}

std::string Variant::key() const { return op + " " + std::string(to_string(backend)) + "/" + std::to_string(id); }

std::string Variant::label() const { return std::string(to_string(backend)) + "/" + std::to_string(id) + " " + name; }

std::string Variant::params_text() const {
  if (params.empty()) return "-";
  std::string out;
  for (const auto& t : params) {
    const std::string name_part = t.name == "block_size" && params.size() == 1 ? "" : t.name + " ";
    out += (out.empty() ? "" : "; ") + name_part + describe_values(t.values);
  }
  return out;
}

std::string Variant::requirements_text() const {
  if (requirements.empty()) return "-";
  std::string out;
  for (const auto& r : requirements) out += (out.empty() ? "" : ", ") + r.text;
  return out;
}

}  // namespace wb
