#include "workbench/runtime/best.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "base/cpu_isa.h"
#include "base/errors.h"
#include "base/files.h"
#include "contract/registry.h"
#include "workbench/runtime/json_file.h"
#include "workbench/runtime/json_integer.h"

namespace wb {

bool allowed_in(NumericClass variant, NumericClass precision) { return int(variant) <= int(precision); }

const BestEntry* BestSection::find(const std::string& op, const Shape& shape) const {
  for (const auto& e : entries)
    if (e.op == op && same_dims(e.shape, shape, e.dims)) return &e;
  return nullptr;
}

std::string BestSection::key() const { return std::string(to_string(backend)) + "/" + device_slug; }

std::size_t BestSection::predicted_entries() const {
  return std::size_t(std::count_if(entries.begin(), entries.end(), [](const BestEntry& e) { return e.predicted; }));
}

std::size_t BestFile::merge(BestSection s) {
  for (auto& old : sections) {
    if (old.backend != s.backend || old.device_slug != s.device_slug) continue;
    // A measured entry already there outlives a predicted one of the same op and shape.
    std::vector<BestEntry> incoming;
    for (BestEntry& e : s.entries) {
      const BestEntry* there = old.find(e.op, e.shape);
      if (!(e.predicted && there && !there->predicted)) incoming.push_back(std::move(e));
    }
    s.entries = std::move(incoming);
    if (s.predicted_model.empty() && old.predicted_entries() > 0) {
      s.predicted_model = old.predicted_model;
      s.predicted_description = old.predicted_description;
      s.predicted_device_measured = old.predicted_device_measured;
    }
    std::vector<BestEntry> kept;
    for (const BestEntry& e : old.entries)
      if (!s.find(e.op, e.shape)) kept.push_back(e);
    for (const std::string& r : old.reports)  // the reports the kept entries came from
      if (std::find(s.reports.begin(), s.reports.end(), r) == s.reports.end() &&
          std::any_of(kept.begin(), kept.end(), [&](const BestEntry& e) { return e.report == r; }))
        s.reports.push_back(r);
    const std::size_t count = kept.size();
    kept.insert(kept.end(), s.entries.begin(), s.entries.end());
    s.entries = std::move(kept);
    if (s.predicted_entries() == 0) s.predicted_model.clear();
    old = std::move(s);
    return count;
  }
  sections.push_back(std::move(s));
  return 0;
}

const BestSection* BestFile::find(Backend b, const std::string& slug) const {
  for (const auto& s : sections)
    if (s.backend == b && s.device_slug == slug) return &s;
  return nullptr;
}

namespace {

bool is_dim_name(const std::string& d) {
  for (const auto& n : Shape::dim_names())
    if (n == d) return true;
  return false;
}

struct Candidate {
  const Record* record;
  const std::string* report;
  double median_s = 0;
  double stddev_s = 0;     // 0 for a predicted time
  bool predicted = false;  // from a predicted report
};

// Faster by more than both measurements' noise and by at least the margin.
bool beats(const Candidate& challenger, const Candidate& holder) {
  const double a = challenger.median_s, b = holder.median_s;
  const double noise = challenger.stddev_s + holder.stddev_s;
  return a < b * (1.0 - kMinWinningMargin) && b - a > noise;
}

std::string label(const Record& r) { return std::string(to_string(r.backend)) + "/" + std::to_string(r.variant); }

std::string major_of(const std::string& cc) { return cc.substr(0, cc.find('.')); }

}  // namespace

DeviceInfo device_of(const Report& report) {
  const auto& p = report.context.predicted_for;
  if (!p) return report.context.device;
  DeviceInfo d;
  d.backend = Backend::cuda;
  d.name = p->device;
  d.slug = p->slug;
  d.compute_capability = p->compute_capability;
  d.multiprocessors = p->multiprocessors;
  d.l2_bytes = p->l2_bytes;
  return d;
}

BestSection choose_best(const std::vector<std::pair<std::string, Report>>& reports, NumericClass precision,
                        bool deterministic_only) {
  if (reports.empty()) throw UsageError("wb best needs at least one report");
  BestSection out;
  const DeviceInfo first = device_of(reports.front().second);
  out.backend = first.backend;
  out.device_name = first.name;
  out.device_slug = first.slug;
  out.compute_capability = first.compute_capability;
  out.isa = first.isa;
  out.precision = precision;
  out.deterministic_only = deterministic_only;
  for (const auto& [path, report] : reports) {
    const DeviceInfo d = device_of(report);
    // The slug too: one CPU at two instruction-set levels (capped, or reports from
    // before the level was part of the slug) is two devices for the choices.
    if (d.backend != first.backend || d.name != first.name || d.slug != first.slug)
      throw UsageError("reports from different devices or backends go into separate sections, one `wb best` each: " +
                       reports.front().first + " is from " + first.name + " (" + std::string(to_string(first.backend)) +
                       "/" + first.slug + "), " + path + " from " + d.name + " (" + std::string(to_string(d.backend)) +
                       "/" + d.slug + ")");
    if (out.architecture.empty()) out.architecture = d.architecture;
    out.reports.push_back(path);
    if (const auto& p = report.context.predicted_for; p && out.predicted_model.empty()) {
      out.predicted_model = p->model;
      out.predicted_description = p->description;
      out.predicted_device_measured = p->device_measured;
    }
  }
  if (out.architecture.empty() && out.backend == Backend::cuda && !out.compute_capability.empty()) {
    const std::string cc = out.compute_capability;
    out.architecture = "sm_" + major_of(cc) + cc.substr(cc.find('.') + 1);
  }

  // (op, shape) in order of first appearance -> variant id -> its fastest configuration
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::map<int, Candidate>> groups;
  // Measured reports first: an (op, shape) they have takes no predicted candidate.
  for (const bool predicted_pass : {false, true}) {
    std::set<std::pair<std::string, std::string>> measured;
    if (predicted_pass)
      for (const auto& [key, per_variant] : groups) measured.insert(key);
    for (const auto& [path, report] : reports) {
      if (bool(report.context.predicted_for) != predicted_pass) continue;
      for (const Record& r : report.records) {
        // A predicted report's records passed the emulated check; their time is the predicted one.
        const bool timed = predicted_pass ? bool(r.predicted) : bool(r.timing);
        if (r.status != Status::ok || !timed || !allowed_in(r.numeric, precision) || !r.omitted.empty()) continue;
        if (is_torch_rung_file(r.source)) {
          ++out.torch_records;
          continue;
        }
        if (deterministic_only && !r.deterministic.value_or(false)) continue;
        const auto key = std::make_pair(r.op, r.shape_text());
        if (measured.count(key)) continue;
        const Candidate c = predicted_pass ? Candidate{&r, &path, r.predicted->seconds, 0.0, true}
                                           : Candidate{&r, &path, r.timing->median_s, r.timing->stddev_s, false};
        if (!groups.count(key)) order.push_back(key);
        auto& per_variant = groups[key];
        auto it = per_variant.find(r.variant);
        if (it == per_variant.end() || c.median_s < it->second.median_s) per_variant[r.variant] = c;
      }
    }
  }

  for (const auto& key : order) {
    const auto& per_variant = groups[key];  // ordered by id: simplest first
    Candidate chosen = per_variant.begin()->second;
    const Candidate* fastest = &per_variant.begin()->second;
    for (const auto& [id, c] : per_variant) {
      if (beats(c, chosen)) chosen = c;
      if (c.median_s < fastest->median_s) fastest = &c;
    }
    const Record& r = *chosen.record;
    BestEntry e;
    static_cast<Configuration&>(e) = r;
    e.median_s = chosen.median_s;
    e.stddev_s = chosen.stddev_s;
    e.deterministic = r.deterministic.value_or(false);
    e.report = *chosen.report;
    e.source_hash = r.source_hash;
    e.predicted = chosen.predicted;
    if (fastest->record == chosen.record) {
      e.note = per_variant.size() == 1 ? "the only correct variant" : "fastest correct";
    } else {
      const double gain = 1.0 - fastest->median_s / chosen.median_s;
      e.note =
          fmt::format("kept over {} ({:.1f}% faster, within noise or under 1%)", label(*fastest->record), 100 * gain);
    }
    if (e.predicted)
      e.note = (per_variant.size() == 1 ? std::string("the only variant that passed the emulated check")
                                        : e.note + " of those that passed the emulated check") +
               ", by predicted time (" + out.predicted_model + "), not verified on a GPU";
    if (deterministic_only) e.note += " (deterministic only)";
    out.entries.push_back(std::move(e));
  }
  return out;
}

namespace {

// Among CPU sections of the same architecture: the one at this CPU's level; else the
// nearest level below it (every rung it names runs here); else the nearest above;
// else one whose level was not recorded. First in file order among equals.
const BestSection* closest_cpu_section(const std::vector<const BestSection*>& sections, const DeviceInfo& here) {
  const auto here_level = cpu::parse_isa_level(here.isa);
  const BestSection* best = nullptr;
  int best_rank = 0;
  for (const BestSection* s : sections) {
    if (s->architecture.empty() || s->architecture != here.architecture) continue;
    const auto level = cpu::parse_isa_level(s->isa);
    int rank = 4;  // unrecorded
    if (level && here_level) {
      const int distance = int(*level) - int(*here_level);
      rank = distance == 0 ? 1 : distance < 0 ? 2 : 3;
      rank = rank * 16 + std::abs(distance);
    } else {
      rank = rank * 16;
    }
    if (!best || rank < best_rank) {
      best = s;
      best_rank = rank;
    }
  }
  return best;
}

}  // namespace

SectionChoice choose_section(const BestFile& file, const DeviceInfo& here) {
  SectionChoice c;
  if (const BestSection* s = file.find(here.backend, here.slug)) {
    c.section = s;
    c.exact = true;
    c.why = "the section of this device (" + s->key() + ")";
    return c;
  }
  // The emulator runs a CUDA device's choices: the same variant ids, emulated.
  const Backend wanted = here.backend == Backend::emu ? Backend::cuda : here.backend;
  std::vector<const BestSection*> same_backend;
  for (const auto& s : file.sections)
    if (s.backend == wanted) same_backend.push_back(&s);
  auto first = [&](auto&& fits) -> const BestSection* {
    for (const BestSection* s : same_backend)
      if (fits(*s)) return s;
    return nullptr;
  };
  if (here.backend == Backend::cpu) {
    c.section = closest_cpu_section(same_backend, here);
    if (c.section) {
      const std::string& level = c.section->isa;
      c.why = "the closest section, " + c.section->key() + " (also " + here.architecture;
      if (!level.empty() && level == here.isa)
        c.why += " at " + level + ")";
      else
        c.why += ", but measured at " + (level.empty() ? std::string("an unrecorded instruction-set level") : level) +
                 " where this CPU runs " + (here.isa.empty() ? std::string("another") : here.isa) +
                 ": the rungs it cannot run fall back to defaults, the others were timed on other instructions)";
    }
  } else {
    const std::string& cc = here.compute_capability;
    c.section = first([&](const BestSection& s) { return !cc.empty() && s.compute_capability == cc; });
    if (c.section) {
      c.why = "the closest section, " + c.section->key() + " (also compute capability " + cc + ")";
    } else {
      c.section = first([&](const BestSection& s) {
        return !cc.empty() && !s.compute_capability.empty() && major_of(s.compute_capability) == major_of(cc);
      });
      if (c.section)
        c.why = "the closest section, " + c.section->key() + " (compute capability " + c.section->compute_capability +
                ", the same major as this device's " + cc + ")";
    }
    if (!c.section && here.backend == Backend::emu && !same_backend.empty()) {
      // Emulation checks correctness only: any CUDA device's choices will do.
      c.section = same_backend.front();
      c.why = "the CUDA section " + c.section->key() + " (none is for the emulated compute capability " + cc + ")";
    }
  }
  if (c.section) return c;
  std::string have;
  for (const auto& s : file.sections) have += (have.empty() ? "" : ", ") + s.key();
  c.why = "no section for this device (" + std::string(to_string(here.backend)) + "/" + here.slug + ") or one like it";
  c.why += have.empty() ? " (the file has no sections)" : " (the file has " + have + ")";
  return c;
}

namespace {

nlohmann::json entries_json(const BestSection& s) {
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& e : s.entries) {
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
                         {"deterministic", e.deterministic},
                         {"report", e.report},
                         {"source_hash", e.source_hash},
                         {"note", e.note}});
    if (e.predicted) ops[e.op].back()["predicted"] = true;  // absent: measured
  }
  return ops;
}

// A non-negative, finite number of microseconds, or UsageError naming the field.
double microseconds(const nlohmann::json& x, const char* key, const std::string& where) {
  const auto& v = x.at(key);
  if (!v.is_number()) throw UsageError(where + "." + key + " is not a number");
  const double us = v.get<double>();
  if (!std::isfinite(us) || us < 0) throw UsageError(where + "." + key + " is " + v.dump() + ", not a time");
  return us * 1e-6;
}

void read_entries(BestSection& s, const nlohmann::json& ops, const std::string& where) {
  if (!ops.is_object()) throw UsageError(where + ".ops is not an object");
  for (const auto& [op, list] : ops.items()) {
    if (!list.is_array()) throw UsageError(where + ".ops." + op + " is not an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& x = list[i];
      const std::string at = where + ".ops." + op + "[" + std::to_string(i) + "]";
      BestEntry e;
      e.op = op;
      const auto& shape = x.at("shape");
      if (!shape.is_object()) throw UsageError(at + ".shape is not an object");
      for (const auto& [dim, value] : shape.items()) {
        if (!is_dim_name(dim)) throw UsageError(at + ".shape has an unknown dimension '" + dim + "'");
        e.shape.set(dim, json_integer(value, at + ".shape." + dim, 1, std::numeric_limits<int64_t>::max()));
      }
      for (const auto& dim : Shape::dim_names())  // JSON objects do not keep their order
        if (shape.contains(dim)) e.dims.push_back(dim);
      e.variant = int(json_integer(x.at("variant"), at + ".variant", 1, std::numeric_limits<int>::max()));
      e.variant_name = x.at("variant_name").get<std::string>();
      e.numeric = parse_numeric_class(x.at("numeric_class").get<std::string>());
      const auto& params = x.at("params");
      if (!params.is_object()) throw UsageError(at + ".params is not an object");
      for (const auto& [name, value] : params.items())  // 0 is a legal value (dq_atomics)
        e.params.set(name, int(json_integer(value, at + ".params." + name, 0, std::numeric_limits<int>::max())));
      e.median_s = microseconds(x, "median_us", at);
      e.stddev_s = microseconds(x, "stddev_us", at);
      e.deterministic = x.value("deterministic", true);  // wb.best/1 did not record it
      e.report = x.at("report").get<std::string>();
      e.source_hash = x.at("source_hash").get<std::string>();
      e.note = x.at("note").get<std::string>();
      e.predicted = x.value("predicted", false);  // written since predicted sections exist
      s.entries.push_back(std::move(e));
    }
  }
}

BestSection section_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw UsageError(where + " is not an object");
  BestSection s;
  s.created = j.at("created").get<std::string>();
  s.backend = parse_backend(j.at("backend").get<std::string>());
  const auto& device = j.at("device");
  s.device_name = device.at("name").get<std::string>();
  s.device_slug = device.at("slug").get<std::string>();
  s.architecture = device.value("architecture", "");
  s.isa = device.value("isa", "");
  s.compute_capability = device.value("compute_capability", "");
  s.precision = parse_numeric_class(j.at("precision").get<std::string>());
  s.deterministic_only = j.value("deterministic_only", false);
  s.reports = j.at("reports").get<std::vector<std::string>>();
  read_entries(s, j.at("ops"), where);
  if (j.contains("predicted")) {  // a section with predicted entries
    const auto& p = j.at("predicted");
    if (!p.is_object()) throw UsageError(where + ".predicted is not an object");
    s.predicted_model = p.at("model").get<std::string>();
    s.predicted_description = p.at("description").get<std::string>();
    s.predicted_device_measured = p.at("device_measured").get<bool>();
  }
  if (s.predicted_entries() > 0 && s.predicted_model.empty())
    throw UsageError(where + " has predicted entries but no 'predicted' object naming the model");
  return s;
}

}  // namespace

nlohmann::json to_json(const BestFile& b) {
  nlohmann::json sections = nlohmann::json::array();
  for (const auto& s : b.sections) {
    sections.push_back({{"backend", to_string(s.backend)},
                        {"device",
                         {{"name", s.device_name},
                          {"slug", s.device_slug},
                          {"architecture", s.architecture},
                          {"isa", s.isa},
                          {"compute_capability", s.compute_capability}}},
                        {"created", s.created},
                        {"precision", to_string(s.precision)},
                        {"deterministic_only", s.deterministic_only},
                        {"reports", s.reports},
                        {"ops", entries_json(s)}});
    if (s.predicted_entries() > 0)
      sections.back()["predicted"] = {{"model", s.predicted_model},
                                      {"description", s.predicted_description},
                                      {"device_measured", s.predicted_device_measured},
                                      {"entries", s.predicted_entries()}};
  }
  return {{"schema", kBestSchema}, {"sections", sections}};
}

BestFile best_from_json(const nlohmann::json& j, const std::string& origin) {
  auto fail = [&](const std::string& what) -> UsageError { return UsageError(origin + ": " + what); };
  if (!j.is_object()) throw fail("not a JSON object");
  const std::string schema = j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "?";
  try {
    BestFile b;
    if (schema == kBestSchemaV1) {  // one device: the file is its section
      b.from_v1 = true;
      b.sections.push_back(section_from_json(j, "the file"));
      return b;
    }
    if (schema != kBestSchema)
      throw fail("has schema '" + schema + "', expected '" + kBestSchema + "' (or '" + kBestSchemaV1 + "')");
    const auto& sections = j.at("sections");
    if (!sections.is_array()) throw fail("sections is not an array");
    for (std::size_t i = 0; i < sections.size(); ++i) {
      BestSection s = section_from_json(sections[i], "sections[" + std::to_string(i) + "]");
      if (b.find(s.backend, s.device_slug)) throw fail("two sections for " + s.key());
      b.sections.push_back(std::move(s));
    }
    return b;
  } catch (const UsageError& e) {
    const std::string what = e.what();
    if (what.rfind(origin + ":", 0) == 0) throw;
    throw fail(what);
  } catch (const nlohmann::json::exception& e) {
    throw fail("not a " + (schema == kBestSchemaV1 ? std::string(kBestSchemaV1) : std::string(kBestSchema)) +
               " file: " + e.what());
  }
}

void write_best(const BestFile& b, const std::string& path) {
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  write_file_atomically(path, to_json(b).dump(2) + "\n");
}

BestFile read_best(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read " + path + ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError("cannot read " + path + ": read failed");
  return parse_best(text.str(), path);
}

BestFile parse_best(std::string_view text, const std::string& origin) {
  return best_from_json(parse_json(text, origin), origin);
}

}  // namespace wb
