#include "workbench/runtime/best.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "kernels/errors.h"

namespace wb {

bool allowed_in(NumericClass variant, NumericClass precision) { return int(variant) <= int(precision); }

const BestEntry* BestFile::find(const std::string& op, const Shape& shape) const {
  for (const auto& e : entries)
    if (e.op == op && same_dims(e.shape, shape, e.dims)) return &e;
  return nullptr;
}

namespace {

struct Candidate {
  const Record* record;
  const std::string* report;
};

// Faster by more than both measurements' noise and by at least the margin.
bool beats(const Record& challenger, const Record& holder) {
  const double a = challenger.timing->median_s, b = holder.timing->median_s;
  const double noise = challenger.timing->stddev_s + holder.timing->stddev_s;
  return a < b * (1.0 - kMinWinningMargin) && b - a > noise;
}

std::string label(const Record& r) { return std::string(to_string(r.backend)) + "/" + std::to_string(r.variant); }

}  // namespace

BestFile choose_best(const std::vector<std::pair<std::string, Report>>& reports, NumericClass precision) {
  if (reports.empty()) throw UsageError("wb best needs at least one report");
  BestFile out;
  const DeviceInfo& first = reports.front().second.context.device;
  out.backend = first.backend;
  out.device_name = first.name;
  out.device_slug = first.slug;
  out.precision = precision;
  for (const auto& [path, report] : reports) {
    const DeviceInfo& d = report.context.device;
    if (d.backend != first.backend || d.name != first.name)
      throw UsageError("reports from different devices or backends are never mixed into one best.json: " +
                       reports.front().first + " is from " + first.name + " (" + std::string(to_string(first.backend)) +
                       "), " + path + " from " + d.name + " (" + std::string(to_string(d.backend)) + ")");
    out.reports.push_back(path);
  }

  // (op, shape) in order of first appearance -> variant id -> its fastest configuration
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::map<int, Candidate>> groups;
  for (const auto& [path, report] : reports) {
    for (const Record& r : report.records) {
      if (r.status != Status::ok || !r.timing || !allowed_in(r.numeric, precision) || !r.omitted.empty()) continue;
      const auto key = std::make_pair(r.op, r.shape_text());
      if (!groups.count(key)) order.push_back(key);
      auto& per_variant = groups[key];
      auto it = per_variant.find(r.variant);
      if (it == per_variant.end() || r.timing->median_s < it->second.record->timing->median_s)
        per_variant[r.variant] = Candidate{&r, &path};
    }
  }

  for (const auto& key : order) {
    const auto& per_variant = groups[key];  // ordered by id: simplest first
    Candidate chosen = per_variant.begin()->second;
    const Candidate* fastest = &per_variant.begin()->second;
    for (const auto& [id, c] : per_variant) {
      if (beats(*c.record, *chosen.record)) chosen = c;
      if (c.record->timing->median_s < fastest->record->timing->median_s) fastest = &c;
    }
    const Record& r = *chosen.record;
    BestEntry e;
    e.op = r.op;
    e.dims = r.dims;
    e.shape = r.shape;
    e.variant = r.variant;
    e.variant_name = r.variant_name;
    e.numeric = r.numeric;
    e.params = r.params;
    e.median_s = r.timing->median_s;
    e.stddev_s = r.timing->stddev_s;
    e.report = *chosen.report;
    e.source_hash = r.source_hash;
    if (fastest->record == chosen.record) {
      e.note = per_variant.size() == 1 ? "the only correct variant" : "fastest correct";
    } else {
      const double gain = 1.0 - fastest->record->timing->median_s / r.timing->median_s;
      e.note =
          fmt::format("kept over {} ({:.1f}% faster, within noise or under 1%)", label(*fastest->record), 100 * gain);
    }
    out.entries.push_back(std::move(e));
  }
  return out;
}

nlohmann::json to_json(const BestFile& b) {
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& e : b.entries) {
    nlohmann::json shape = nlohmann::json::object(), params = nlohmann::json::object();
    for (const auto& d : e.dims) shape[d] = e.shape.get(d);
    for (const auto& [name, value] : e.params.items()) params[name] = value;
    ops[e.op].push_back({{"shape", shape},
                         {"variant", e.variant},
                         {"variant_name", e.variant_name},
                         {"numeric_class", to_string(e.numeric)},
                         {"params", params},
                         {"median_us", e.median_s * 1e6},
                         {"stddev_us", e.stddev_s * 1e6},
                         {"report", e.report},
                         {"source_hash", e.source_hash},
                         {"note", e.note}});
  }
  return {{"schema", kBestSchema},
          {"created", b.created},
          {"backend", to_string(b.backend)},
          {"device", {{"name", b.device_name}, {"slug", b.device_slug}}},
          {"precision", to_string(b.precision)},
          {"reports", b.reports},
          {"ops", ops}};
}

BestFile best_from_json(const nlohmann::json& j, const std::string& origin) {
  auto fail = [&](const std::string& what) -> UsageError { return UsageError(origin + ": " + what); };
  try {
    if (!j.is_object()) throw fail("not a JSON object");
    if (j.value("schema", "") != kBestSchema)
      throw fail("has schema '" + j.value("schema", std::string("?")) + "', expected '" + kBestSchema + "'");
    BestFile b;
    b.created = j.at("created").get<std::string>();
    b.backend = parse_backend(j.at("backend").get<std::string>());
    b.device_name = j.at("device").at("name").get<std::string>();
    b.device_slug = j.at("device").at("slug").get<std::string>();
    b.precision = parse_numeric_class(j.at("precision").get<std::string>());
    b.reports = j.at("reports").get<std::vector<std::string>>();
    for (const auto& [op, list] : j.at("ops").items()) {
      if (!list.is_array()) throw fail("ops." + op + " is not an array");
      for (const auto& x : list) {
        BestEntry e;
        e.op = op;
        for (const auto& dim : Shape::dim_names()) {
          if (!x.at("shape").contains(dim)) continue;
          e.shape.set(dim, x.at("shape").at(dim).get<int64_t>());
          e.dims.push_back(dim);
        }
        e.variant = x.at("variant").get<int>();
        e.variant_name = x.at("variant_name").get<std::string>();
        e.numeric = parse_numeric_class(x.at("numeric_class").get<std::string>());
        for (const auto& [name, value] : x.at("params").items()) e.params.set(name, value.get<int>());
        e.median_s = x.at("median_us").get<double>() * 1e-6;
        e.stddev_s = x.at("stddev_us").get<double>() * 1e-6;
        e.report = x.at("report").get<std::string>();
        e.source_hash = x.at("source_hash").get<std::string>();
        e.note = x.at("note").get<std::string>();
        b.entries.push_back(std::move(e));
      }
    }
    return b;
  } catch (const nlohmann::json::exception& e) {
    throw fail(std::string("not a wb.best/1 file: ") + e.what());
  }
}

void write_best(const BestFile& b, const std::string& path) {
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream out(path);
  out << to_json(b).dump(2) << "\n";
  if (!out) throw UsageError("cannot write " + path);
}

BestFile read_best(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path + ": no such file or not readable");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": malformed JSON: " + e.what());
  }
  return best_from_json(j, path);
}

}  // namespace wb
