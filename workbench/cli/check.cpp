// wb check: correctness only. Every variant of the backend, every legal launch
// configuration, every check shape (kernels/shape.h), a fresh seed per shape; each
// configuration validated twice (determinism), launched a few times, validated again.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "kernels/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/pipeline_isolate.h"
#include "workbench/cli/output.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"
#include "workbench/runtime/table.h"

namespace wb::cli {
namespace {

// What the configurations of one variant on one shape came to.
struct Tally {
  int ok = 0, skipped = 0, incorrect = 0, not_emulated = 0, not_run = 0;
  double worst_err = 0;
  int deterministic = 0, nondeterministic = 0;
  std::string note;  // first skip reason

  void add(const Record& r) {
    switch (r.status) {
      case Status::ok:
        ++ok;
        break;
      case Status::skipped:
        ++skipped;
        break;
      case Status::incorrect:
        ++incorrect;
        break;
      case Status::not_emulated:
        ++not_emulated;
        break;
      case Status::not_run:
        ++not_run;
        break;
    }
    if ((r.status == Status::skipped || r.status == Status::not_emulated) && note.empty()) note = r.reason;
    if (r.status == Status::not_run && note.empty()) note = "not run: device lost";
    if (r.status == Status::ok) {
      for (const auto& c : r.errors) worst_err = std::max(worst_err, c.max_abs_err);
      if (r.deterministic) ++(*r.deterministic ? deterministic : nondeterministic);
    }
  }
  std::string result() const {
    std::string s;
    auto part = [&](int n, const char* what) {
      if (n) s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    part(incorrect, "INCORRECT");
    part(ok, "ok");
    part(skipped, "skipped");
    part(not_emulated, "not emulated");
    part(not_run, "not run");
    return s;
  }
  std::string determinism() const {
    if (deterministic + nondeterministic == 0) return "-";
    return nondeterministic ? "no" : "yes";
  }
};

// The configurations of v to check: all legal ones, or with --block-sizes those whose
// block size is listed (a variant that has none of them checks its default).
std::vector<ParamValues> configurations(const Variant& v, const std::optional<std::vector<int>>& sizes) {
  std::vector<ParamValues> all = v.all_params();
  if (!sizes) return all;
  std::vector<ParamValues> chosen;
  for (const ParamValues& p : all) {
    const auto bs = p.find("block_size");
    if (bs && std::find(sizes->begin(), sizes->end(), *bs) != sizes->end()) chosen.push_back(p);
  }
  if (chosen.empty()) chosen.push_back(v.default_params());
  return chosen;
}

// The optional tensors (a bias) of op, when a pass leaves them out.
std::vector<std::string> omitted_tensors(const OpSpec& op, bool omit_optional) {
  std::vector<std::string> out;
  if (omit_optional)
    for (const auto& t : op.tensors)
      if (t.optional) out.push_back(t.name);
  return out;
}

}  // namespace

int check(const CheckOptions& o) {
  const Registry& reg = registry();
  if (o.all == !o.op.empty()) throw UsageError("give one op or --all");
  if (o.all && !o.variants.empty() && o.variants != "all")
    throw UsageError("--variants selects ids of one op; with --all leave it out");
  const std::vector<const OpSpec*> ops = o.all ? reg.ops() : std::vector<const OpSpec*>{&reg.op(o.op)};
  if (o.misalign != 0 && o.misalign != 4 && o.misalign != 8 && o.misalign != 12)
    throw UsageError("--misalign " + std::to_string(o.misalign) +
                     ": give 4, 8 or 12 bytes (tensors hold 4-byte elements)");
  const Backend b = resolve_backend(o.backend);
  const uint64_t seed = resolve_seed(o.seed);
  std::vector<Shape> shapes;
  std::vector<std::string> shape_names;  // for the children of --isolate
  {
    const std::vector<CheckShape> named = named_check_shapes(b == Backend::emu);
    std::string known;
    for (const auto& n : named) known += (known.empty() ? "" : ", ") + n.name;
    if (o.shapes.empty() || o.shapes == "all") {
      for (const auto& n : named) {
        shapes.push_back(n.shape);
        shape_names.push_back(n.name);
      }
    } else {
      std::size_t start = 0;
      while (start <= o.shapes.size()) {
        std::size_t comma = o.shapes.find(',', start);
        if (comma == std::string::npos) comma = o.shapes.size();
        const std::string name = o.shapes.substr(start, comma - start);
        auto it = std::find_if(named.begin(), named.end(), [&](const CheckShape& n) { return n.name == name; });
        if (it == named.end())
          throw UsageError("--shapes: unknown check shape '" + name + "' (the " + std::string(to_string(b)) +
                           " check shapes: " + known + ")");
        shapes.push_back(it->shape);
        shape_names.push_back(it->name);
        start = comma + 1;
      }
    }
  }
  std::optional<std::vector<int>> sizes;
  if (!o.block_sizes.empty() && o.block_sizes != "all") sizes = parse_int_list(o.block_sizes, "--block-sizes");

  // The work, up front, so that the progress line can count.
  struct Job {
    const OpSpec* op;
    std::size_t shape;
    bool omit_optional;  // a second pass with the optional tensors (a bias) null
    std::vector<const Variant*> variants;
    std::size_t configs = 0;
  };
  std::vector<Job> jobs;
  std::size_t total = 0;
  for (const OpSpec* op : ops) {
    const auto variants = select_variants(reg, *op, b, o.variants);
    for (std::size_t si = 0; si < shapes.size(); ++si) {
      try {
        op->check_shape(shapes[si]);
      } catch (const UsageError&) {
        continue;  // this check shape does not apply to the op
      }
      const bool has_optional =
          std::any_of(op->tensors.begin(), op->tensors.end(), [](const TensorSpec& t) { return t.optional; });
      for (bool omit : {false, true}) {
        if (omit && !has_optional) continue;
        Job job{op, si, omit, variants, 0};
        for (const Variant* v : variants) job.configs += configurations(*v, sizes).size();
        total += job.configs;
        if (job.configs) jobs.push_back(job);
      }
    }
  }

  auto ex = make_executor(b);
  ex->set_strict_sync(o.strict_sync);
  Report report{make_context(*ex, TimingOptions{}, o.command), {}};
  TextTable table({"op", "variant", "shape", "configurations", "max err", "deterministic", "note"});
  std::vector<std::string> failures;
  std::vector<std::string> notes;  // each once, with the first configuration that noted it
  std::set<std::string> noted;
  EvalOptions eval;
  if (b == Backend::emu) eval.check_launches = 1;  // each emulated launch costs milliseconds
  // --isolate: one child per (op, check shape, variant), which checks both passes (with
  // and without the optional tensors) at the seed this process would have used.
  std::unique_ptr<IsolationDir> isolation;
  if (o.isolate) isolation = std::make_unique<IsolationDir>();
  std::map<std::tuple<std::string, std::size_t, int>, ChildOutcome> children;
  auto isolated = [&](const Job& job, const Variant& v, const ParamValues& p) {
    auto key = std::make_tuple(job.op->name, job.shape, v.id);
    auto it = children.find(key);
    if (it == children.end()) {
      const std::string out = isolation->next_file("report");
      std::vector<std::string> args{"check",      job.op->name,
                                    "--backend",  std::string(to_string(b)),
                                    "--variants", std::to_string(v.id),
                                    "--shapes",   shape_names[job.shape],
                                    "--seed",     std::to_string(seed + job.shape),
                                    "--json",     out};
      if (!o.block_sizes.empty()) args.insert(args.end(), {"--block-sizes", o.block_sizes});
      if (o.misalign) args.insert(args.end(), {"--misalign", std::to_string(o.misalign)});
      if (o.strict_sync) args.push_back("--strict-sync");
      it = children.emplace(key, run_child(args, out, *isolation)).first;
    }
    const ChildOutcome& child = it->second;
    if (child.report)
      for (const Record& r : child.report->records)
        if (r.variant == v.id && r.params == p && r.omitted.empty() != job.omit_optional) return r;
    Record r = record_for(*job.op, v, p, shapes[job.shape]);
    r.seed = seed + job.shape;
    r.omitted = omitted_tensors(*job.op, job.omit_optional);
    r.status = Status::incorrect;
    r.reason = child.report ? "the child process reported no result for this configuration" : child.failure;
    return r;
  };
  std::optional<std::string> lost;  // the fault that lost the device, once it has
  {
    Progress progress(total);
    for (const Job& job : jobs) {
      const Shape& shape = shapes[job.shape];
      const std::string shape_text =
          shape_with_omitted(job.op->describe_shape(shape), omitted_tensors(*job.op, job.omit_optional));
      // Without --isolate the problem goes on this process's device, unless a fault
      // has lost it: then what is left is recorded as not run.
      std::unique_ptr<Session> session;
      if (!o.isolate) {
        lost = ex->lost();
        if (!lost) session = std::make_unique<Session>(reg, *job.op, shape, seed + job.shape, *ex, job.omit_optional,
                                                  std::size_t(o.misalign));
      }
      for (const Variant* v : job.variants) {
        Tally tally;
        for (const ParamValues& p : configurations(*v, sizes)) {
          progress.step(v->key() + " " + p.describe() + " " + shape_text);
          Record r = o.isolate ? isolated(job, *v, p)
                     : session ? session->evaluate(*v, p, eval)
                               : not_run_record(*job.op, *v, p, shape, job.omit_optional, seed + job.shape, *lost);
          tally.add(r);
          for (const std::string& n : r.notes)
            if (noted.insert(n).second)
              notes.push_back(fmt::format("{} {} {} at {}: {}", job.op->name, v->label(), p.describe(), shape_text, n));
          if (r.status == Status::incorrect)
            failures.push_back(
                fmt::format("{} {} {} at {}: {}", job.op->name, v->label(), p.describe(), shape_text, r.reason));
          if (o.verbose)
            std::cout << fmt::format("{} {} {} {}: {} {}\n", job.op->name, v->label(), p.describe(), shape_text,
                                     to_string(r.status), r.reason);
          report.records.push_back(std::move(r));
        }
        table.add({job.op->name, v->label(), shape_text, tally.result(),
                   tally.ok ? fmt::format("{:.1e}", tally.worst_err) : "-", tally.determinism(), tally.note});
      }
    }
  }
  lost = ex->lost();
  table.print(std::cout);
  int ok = 0, skipped = 0, not_emulated = 0, not_run = 0;
  for (const auto& r : report.records) {
    ok += r.status == Status::ok;
    skipped += r.status == Status::skipped;
    not_emulated += r.status == Status::not_emulated;
    not_run += r.status == Status::not_run;
  }
  for (const auto& n : notes) std::cout << "NOTE " << n << "\n";
  for (const auto& f : failures) std::cout << "INCORRECT " << f << "\n";
  if (lost)
    std::cout << "DEVICE LOST: " << *lost << "\n  " << not_run
              << " configurations after the fault were not run (--isolate runs each variant in its own process)\n";
  std::cout << fmt::format("{} backend on {}: {} configurations, {} ok, {} skipped, {}{} incorrect{} (seed {})\n",
                           to_string(b), ex->device().name, report.records.size(), ok, skipped,
                           not_emulated ? fmt::format("{} not emulated, ", not_emulated) : "", failures.size(),
                           not_run ? fmt::format(", {} not run", not_run) : "", seed);
  if (!o.json.empty()) {
    const std::string path = output_path(o.json, *ex);
    write_report(report, path);
    std::cout << "wrote " << path << "\n";
  }
  return failures.empty() && not_run == 0 ? kOk : kCheckFailed;
}

}  // namespace wb::cli
