#include "workbench/runtime/device_description.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/errors.h"
#include "workbench/runtime/context.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/json_file.h"
#include "workbench/runtime/json_integer.h"

namespace wb {
namespace {

using nlohmann::json;

// Reads the fields of one JSON object, each once, and refuses the ones it was not asked
// for: a misspelt field ("l2_gbs") is an error, not a default silently taken.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) throw UsageError(where_ + " is not a JSON object");
  }
  const json& at(const std::string& key) {
    seen_.insert(key);
    if (!j_.contains(key)) throw UsageError(where_ + ": missing field '" + key + "'");
    return j_.at(key);
  }
  std::string text(const std::string& key) {
    const json& v = at(key);
    if (!v.is_string() || v.get<std::string>().empty())
      throw UsageError(where_ + "." + key + " is " + v.dump() + ", not a non-empty string");
    return v.get<std::string>();
  }
  double positive(const std::string& key) {
    const json& v = at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
      throw UsageError(where_ + "." + key + " is " + v.dump() + ", not a positive number");
    return v.get<double>();
  }
  int integer(const std::string& key, int lo, int hi) { return int(json_integer(at(key), where_ + "." + key, lo, hi)); }
  bool boolean(const std::string& key) {
    const json& v = at(key);
    if (!v.is_boolean()) throw UsageError(where_ + "." + key + " is " + v.dump() + ", not true or false");
    return v.get<bool>();
  }
  Fields child(const std::string& key) { return Fields(at(key), where_ + "." + key); }
  // Called once every field was read: any other is unknown.
  void done() const {
    for (const auto& [key, value] : j_.items())
      if (!seen_.count(key)) throw UsageError(where_ + ": unknown field '" + key + "'");
  }

 private:
  const json& j_;
  std::string where_;
  std::set<std::string> seen_;
};

bool is_slug(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

}  // namespace

DeviceDescription parse_device_description(std::string_view text, const std::string& origin) {
  const json j = parse_json(text, origin);
  Fields f(j, origin);
  const std::string schema = f.text("schema");
  if (schema != kDeviceSchema)
    throw UsageError(origin + ": schema is '" + schema + "', expected '" + kDeviceSchema + "'");
  DeviceDescription d;
  DeviceModel& m = d.model;
  m.name = f.text("name");
  m.sms = f.integer("sms", 1, 100000);
  m.clock_hz = f.positive("clock_mhz") * 1e6;
  d.compute_capability = f.text("compute_capability");
  m.compute_capability = compute_capability_number(d.compute_capability);
  if (m.compute_capability <= 0)
    throw UsageError(origin + ".compute_capability is \"" + d.compute_capability + "\", not of the form \"9.0\"");
  Fields c = f.child("ceilings");
  m.ceilings.copy_gbps = c.positive("copy_gbps");
  m.ceilings.fp32_tflops = c.positive("fp32_tflops");
  m.ceilings.tf32_tflops = c.positive("tf32_tflops");
  m.ceilings.bf16_tflops = c.positive("bf16_tflops");
  c.done();
  m.l2_bytes = double(json_integer(f.at("l2_bytes"), origin + ".l2_bytes", 1, std::numeric_limits<int64_t>::max()));
  m.l2_gbps = f.positive("l2_gbps");
  m.max_warps_per_sm = f.integer("max_warps_per_sm", 1, 1024);
  m.max_blocks_per_sm = f.integer("max_blocks_per_sm", 1, 1024);
  Fields issue = f.child("issue_rates");
  m.issue.shuffle = issue.positive("shuffle");
  m.issue.mma = issue.positive("mma");
  m.issue.ldmatrix = issue.positive("ldmatrix");
  m.issue.special = issue.positive("special");
  issue.done();
  m.measured = f.boolean("measured");
  m.source = f.text("source");
  f.done();
  m.ceilings.method =
      (m.measured ? "measured by wb, from the device description " : "published, from the device description ") +
      origin;
  d.slug = slugify(m.name);
  d.path = origin;
  return d;
}

DeviceDescription read_device_description(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the device description " + path + ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError("cannot read the device description " + path + ": read failed");
  return parse_device_description(text.str(), path);
}

std::string devices_dir() { return default_results_dir() + "/devices"; }

std::vector<std::string> known_devices() {
  std::vector<std::string> slugs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(devices_dir(), ec))
    if (entry.path().extension() == ".json") slugs.push_back(entry.path().stem().string());
  std::sort(slugs.begin(), slugs.end());
  return slugs;
}

DeviceDescription find_device_description(const std::string& slug_or_path) {
  const bool is_path = slug_or_path.find('/') != std::string::npos ||
                       (slug_or_path.size() > 5 && slug_or_path.compare(slug_or_path.size() - 5, 5, ".json") == 0);
  if (is_path) return read_device_description(slug_or_path);
  const std::string path = devices_dir() + "/" + slug_or_path + ".json";
  if (!is_slug(slug_or_path) || !std::filesystem::exists(path)) {
    std::string known;
    for (const std::string& s : known_devices()) known += (known.empty() ? "" : ", ") + s;
    throw UsageError("unknown device '" + slug_or_path + "': give the slug of a description in " + devices_dir() +
                     " (" + (known.empty() ? std::string("none there") : known) + ") or the path of a .json file");
  }
  DeviceDescription d = read_device_description(path);
  // A committed description is named as the repository names it, in every report and
  // best.json that cites it, wherever the tree was checked out.
  if (devices_dir() == source_dir() + "/results/devices") d.path = "results/devices/" + slug_or_path + ".json";
  return d;
}

}  // namespace wb
