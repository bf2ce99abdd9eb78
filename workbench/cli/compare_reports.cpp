#include "workbench/cli/compare_reports.h"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "base/enum_names.h"
#include "base/errors.h"
#include "workbench/runtime/table.h"

namespace wb {

namespace {
constexpr EnumNames<Verdict, 8> kVerdictNames = {
    {Verdict::faster, "FASTER"}, {Verdict::same, "SAME"},
    {Verdict::slower, "SLOWER"}, {Verdict::added, "NEW"},
    {Verdict::gone, "GONE"},     {Verdict::now_incorrect, "NOW-INCORRECT"},
    {Verdict::worse, "WORSE"},   {Verdict::better, "BETTER"}};
}  // namespace

std::string_view to_string(Verdict v) { return name_in(kVerdictNames, v); }

namespace {

std::string key_of(const Record& r) {
  return r.op + "|" + std::string(to_string(r.backend)) + "/" + std::to_string(r.variant) + "|" + r.params.describe() +
         "|" + r.shape_text();
}

Comparison row_for(const Record& r) {
  Comparison c;
  c.op = r.op;
  c.variant = r.variant_label();
  c.params = r.params.describe();
  c.shape = r.shape_text();
  return c;
}

std::optional<double> median(const Record* r) {
  if (r && r->status == Status::ok && r->timing) return r->timing->median_s;
  return std::nullopt;
}

// The counters' measures that the gate holds, each larger-is-worse.
struct CounterMeasures {
  double sectors_per_request = 0;  // global
  double conflicts_per_request = 0;  // excess shared wavefronts per shared request
  double occupancy_loss[2] = {0, 0};  // 1 - the lowest theoretical occupancy, sm_80 and sm_90
};

CounterMeasures measures(const Counters& c) {
  const CounterTotals t = c.totals();
  CounterMeasures m;
  m.sectors_per_request = t.sectors_per_request();
  m.conflicts_per_request = t.shared_requests ? double(t.conflicts()) / double(t.shared_requests) : 0.0;
  m.occupancy_loss[0] = 1 - c.occupancy(80);
  m.occupancy_loss[1] = 1 - c.occupancy(90);
  return m;
}

// The site whose excess sectors or wavefronts grew most from base to now (one of now's
// that base lacks counts all of its excess), as "<site> <kind> <verdict>"; "" if none.
std::string worst_growth(const Counters& base, const Counters& now) {
  std::map<std::string, uint64_t> before;
  for (const KernelCount& k : base.kernels)
    for (const SiteCount& s : k.sites) before[s.site + "|" + s.kind()] += s.excess();
  std::map<std::string, std::pair<uint64_t, const SiteCount*>> after;
  for (const KernelCount& k : now.kernels)
    for (const SiteCount& s : k.sites) {
      auto& a = after[s.site + "|" + s.kind()];
      a.first += s.excess();
      if (!a.second || s.excess() > a.second->excess()) a.second = &s;
    }
  const SiteCount* worst = nullptr;
  int64_t most = 0;
  for (const auto& [key, a] : after) {
    const int64_t growth = int64_t(a.first) - int64_t(before[key]);
    if (growth > most) most = growth, worst = a.second;
  }
  return worst ? worst->site + " " + worst->kind() + " " + worst->verdict() : "";
}

// WORSE (a regression) or BETTER on the counters, or nothing when they hold.
void judge_counters(Comparison& c, const Counters& base, const Counters& now, double max_increase) {
  const CounterMeasures a = measures(base), b = measures(now);
  struct Measure {
    const char* name;
    double before, after;
  };
  const Measure all[] = {{"global sectors/request", a.sectors_per_request, b.sectors_per_request},
                         {"bank-conflict wavefronts/request", a.conflicts_per_request, b.conflicts_per_request},
                         {"sm_80 occupancy lost", a.occupancy_loss[0], b.occupancy_loss[0]},
                         {"sm_90 occupancy lost", a.occupancy_loss[1], b.occupancy_loss[1]}};
  // Counts are exact, but the ratios are doubles: a relative 1e-9 is no change.
  auto worse = [&](const Measure& m) { return m.after > m.before * (1 + max_increase) + 1e-9 * (1 + m.before); };
  auto better = [](const Measure& m) { return m.after < m.before - 1e-9 * (1 + m.before); };
  std::string note;
  bool any_better = false;
  for (const Measure& m : all) {
    any_better = any_better || better(m);
    if (worse(m)) note += fmt::format("{}{} {:.3g} -> {:.3g}", note.empty() ? "" : "; ", m.name, m.before, m.after);
  }
  if (!note.empty()) {
    c.verdict = Verdict::worse;
    c.regression = true;
    const std::string site = worst_growth(base, now);
    c.note = note + (site.empty() ? "" : " (worst: " + site + ")");
  } else if (any_better && (c.verdict == Verdict::same || c.verdict == Verdict::faster)) {
    c.verdict = Verdict::better;
    c.note = "counters better";
  }
}

Comparison judge(const Record* base, const Record* now, double max_slowdown, double max_counter_increase) {
  Comparison c = row_for(now ? *now : *base);
  c.base_s = median(base);
  c.new_s = median(now);
  if (!now) {
    c.verdict = Verdict::gone;
    c.note = "not in the new report";
    return c;
  }
  if (!base) {
    c.verdict = Verdict::added;
    c.note = now->status == Status::ok ? "" : std::string(to_string(now->status)) + ": " + now->reason;
    c.regression = false;
    return c;
  }
  if (base->status == Status::ok && now->status == Status::incorrect) {
    c.verdict = Verdict::now_incorrect;
    c.regression = true;
    c.note = now->reason;
    return c;
  }
  if (base->status != Status::ok && now->status == Status::ok) {
    c.verdict = Verdict::added;
    c.note = "was " + std::string(to_string(base->status)) + ", now correct";
    return c;
  }
  if (base->status == Status::ok && now->status != Status::ok && now->status != Status::incorrect) {
    c.verdict = Verdict::gone;  // skipped, not emulated, or never run (the device was lost)
    c.note = "now " + std::string(to_string(now->status)) + ": " + now->reason;
    return c;
  }
  const bool counted = base->status == Status::ok && now->status == Status::ok && base->counters && now->counters;
  if (!c.base_s || !c.new_s) {  // neither side timed: skipped or incorrect in both, or emulated
    c.verdict = Verdict::same;
    c.note = std::string(to_string(now->status)) + " in both";
    if (counted) judge_counters(c, *base->counters, *now->counters, max_counter_increase);
    return c;
  }
  const double delta = *c.new_s - *c.base_s;
  const double noise = base->timing->stddev_s + now->timing->stddev_s;
  if (std::abs(delta) <= noise) {
    c.verdict = Verdict::same;
  } else if (delta < 0) {
    c.verdict = Verdict::faster;
  } else {
    c.verdict = Verdict::slower;
    c.regression = c.change() > max_slowdown;
    c.note = c.regression ? fmt::format("beyond the allowed {:.1f}%", 100 * max_slowdown)
                          : fmt::format("within the allowed {:.1f}%", 100 * max_slowdown);
  }
  if (counted && !c.regression) judge_counters(c, *base->counters, *now->counters, max_counter_increase);
  return c;
}

std::string time_text(const std::optional<double>& s) {
  if (!s) return "-";
  return *s < 1e-3 ? fmt::format("{:.2f} us", *s * 1e6) : fmt::format("{:.3f} ms", *s * 1e3);
}

std::string change_text(const Comparison& c) {
  if (!c.base_s || !c.new_s) return "-";
  return fmt::format("{:+.1f}%", 100 * c.change());
}

}  // namespace

CompareResult compare_reports(const Report& base, const Report& now, double max_slowdown,
                              double max_counter_increase) {
  const DeviceInfo &a = base.context.device, &b = now.context.device;
  if (a.backend != b.backend || a.name != b.name)
    throw UsageError("the reports come from different devices: " + a.name + " (" + std::string(to_string(a.backend)) +
                     ") and " + b.name + " (" + std::string(to_string(b.backend)) + ")");
  if (base.records.empty()) throw UsageError("the baseline report has no records: nothing to compare against");
  if (now.records.empty()) throw UsageError("the new report has no records: nothing was measured");
  CompareResult out;
  out.max_slowdown = max_slowdown;
  out.max_counter_increase = max_counter_increase;
  std::map<std::string, const Record*> new_by_key;
  for (const auto& r : now.records) new_by_key.emplace(key_of(r), &r);
  std::map<std::string, bool> seen;
  for (const auto& r : base.records) {
    const std::string key = key_of(r);
    if (seen[key]) continue;  // a key twice in one report: the first counts
    seen[key] = true;
    auto it = new_by_key.find(key);
    const Record* again = it == new_by_key.end() ? nullptr : it->second;
    out.rerun += again && (again->status == Status::ok || again->status == Status::incorrect);
    out.rows.push_back(judge(&r, again, max_slowdown, max_counter_increase));
  }
  for (const auto& r : now.records) {
    const std::string key = key_of(r);
    if (seen[key]) continue;
    seen[key] = true;
    out.rows.push_back(judge(nullptr, &r, max_slowdown, max_counter_increase));
  }
  return out;
}

int CompareResult::count(Verdict v) const {
  int n = 0;
  for (const auto& r : rows) n += r.verdict == v;
  return n;
}

int CompareResult::regressions() const {
  int n = 0;
  for (const auto& r : rows) n += r.regression;
  return n;
}

std::string CompareResult::summary() const {
  const std::string counters =
      count(Verdict::worse) + count(Verdict::better)
          ? fmt::format(", {} WORSE and {} BETTER on the counters", count(Verdict::worse), count(Verdict::better))
          : "";
  return fmt::format(
      "{} records: {} FASTER, {} SAME, {} SLOWER ({} beyond {:.1f}%), {} NEW, {} GONE, {} NOW-INCORRECT{}: {}",
      rows.size(), count(Verdict::faster), count(Verdict::same), count(Verdict::slower),
      regressions() - count(Verdict::now_incorrect) - count(Verdict::worse), 100 * max_slowdown,
      count(Verdict::added), count(Verdict::gone), count(Verdict::now_incorrect), counters,
      passed()     ? "PASS"
      : rerun == 0 ? "FAIL: no record of the baseline ran again"
                   : "FAIL");
}

std::string format_text(const CompareResult& r) {
  TextTable t({"verdict", "op", "variant", "launch", "shape", "base", "new", "change", "note"});
  for (const auto& c : r.rows)
    t.add({std::string(to_string(c.verdict)) + (c.regression ? " !" : ""), c.op, c.variant, c.params, c.shape,
           time_text(c.base_s), time_text(c.new_s), change_text(c), c.note});
  std::ostringstream out;
  t.print(out);
  out << r.summary() << "\n";
  return out.str();
}

std::string format_markdown(const CompareResult& r) {
  std::ostringstream out;
  out << "| verdict | op | variant | launch | shape | base | new | change | note |\n"
      << "| --- | --- | --- | --- | --- | ---: | ---: | ---: | --- |\n";
  for (const auto& c : r.rows)
    out << "| " << (c.regression ? "**" + std::string(to_string(c.verdict)) + "**" : std::string(to_string(c.verdict)))
        << " | " << c.op << " | " << c.variant << " | " << c.params << " | " << c.shape << " | " << time_text(c.base_s)
        << " | " << time_text(c.new_s) << " | " << change_text(c) << " | " << c.note << " |\n";
  out << "\n" << r.summary() << "\n";
  return out.str();
}

}  // namespace wb
