#include "workbench/cli/pipeline.h"

#include <memory>
#include <optional>
#include <ostream>
#include <set>

#include "base/errors.h"
#include "base/text.h"
#include "workbench/cli/options.h"
#include "workbench/cli/output.h"
#include "workbench/cli/pipeline_isolate.h"

namespace wb::cli {

std::vector<std::string> Job::omitted() const {
  std::vector<std::string> out;
  if (omit_optional)
    for (const auto& t : op->tensors)
      if (t.optional) out.push_back(t.name);
  return out;
}

std::string Job::shape_text() const { return shape_with_omitted(op->describe_shape(shape), omitted()); }

std::string Unit::describe(const std::vector<Job>& jobs) const {
  return variant->key() + " " + params.describe() + " " + jobs[job].shape_text();
}

Record Plan::blank_record(const Unit& unit) const {
  const Job& job = jobs[unit.job];
  Record r = record_for(*job.op, *unit.variant, unit.params, job.shape);
  r.seed = job.seed;
  r.omitted = job.omitted();
  return r;
}

std::vector<std::string> configurations_args(const Plan& plan, const std::vector<std::size_t>& units) {
  std::string list;
  for (std::size_t i : units) list += (list.empty() ? "" : ";") + plan.units[i].params.describe();
  return {"--configurations", list};
}

void keep_configurations(Plan& plan, const std::string& list) {
  const std::vector<std::string> listed = split_list(list, ';');
  const std::set<std::string> wanted(listed.begin(), listed.end());
  std::set<std::string> planned;
  std::vector<Unit> kept;
  for (Unit& unit : plan.units) {
    const std::string configuration = unit.params.describe();
    planned.insert(configuration);
    if (wanted.count(configuration)) kept.push_back(std::move(unit));
  }
  for (const std::string& w : wanted)
    if (!planned.count(w)) throw UsageError("--configurations: '" + w + "' is not a configuration this run plans");
  plan.units = std::move(kept);
}

namespace {

// Units on this process's device: a Session per job, made when its first unit comes
// (the previous one freed first), none once a fault has lost the device.
class Here {
 public:
  Here(const Registry& reg, Executor& ex, const EvalOptions& eval) : reg_(reg), ex_(ex), eval_(eval) {}

  Record record(const Plan& plan, const Unit& unit) {
    const Job& job = plan.jobs[unit.job];
    if (auto fault = ex_.lost())  // no new problem goes on a lost device
      return not_run_record(*job.op, *unit.variant, unit.params, job.shape, job.omit_optional, job.seed, *fault);
    if (!session_ || session_job_ != unit.job) {
      session_.reset();
      session_ = std::make_unique<Session>(reg_, *job.op, job.shape, job.seed, ex_, job.omit_optional, job.misalign);
      session_job_ = unit.job;
    }
    return session_->evaluate(*unit.variant, unit.params, eval_);
  }

 private:
  const Registry& reg_;
  Executor& ex_;
  const EvalOptions& eval_;
  std::unique_ptr<Session> session_;
  std::size_t session_job_ = 0;
};

// Units in children of --isolate: one child per (job group, variant), started at the
// first of its units, measuring all of them at once.
class Children {
 public:
  Children(const Plan& plan, const ChildArgs& args) : plan_(plan), args_(args), made_(plan.units.size()) {}

  Record record(std::size_t unit) {
    if (!made_[unit]) start(unit);
    return *made_[unit];
  }

 private:
  void start(std::size_t unit) {
    const Unit& first = plan_.units[unit];
    std::vector<std::size_t> mine;
    std::vector<Record> wanted;
    for (std::size_t i = 0; i < plan_.units.size(); ++i) {
      const Unit& u = plan_.units[i];
      if (u.skip.empty() && u.variant == first.variant && plan_.jobs[u.job].group == plan_.jobs[first.job].group) {
        mine.push_back(i);
        wanted.push_back(plan_.blank_record(u));
      }
    }
    // A fault in the child loses its device, and the configurations after it come back
    // not run: they go to a fresh child, and again after each fault, until all are
    // checked or a child makes no progress (one that faults before it checks any of
    // them, or dies and reports none). So one fault costs one configuration.
    while (!mine.empty()) {
      const std::string out = dir_.next_file("report");
      ChildRecords got = records_from_child(args_(plan_, mine, out), out, wanted, dir_);
      std::vector<std::size_t> again;
      std::vector<Record> again_wanted;
      for (std::size_t k = 0; k < mine.size(); ++k)
        if (got.records[k].status == Status::not_run) {
          again.push_back(mine[k]);
          again_wanted.push_back(std::move(wanted[k]));
        }
      const bool progress = again.size() < mine.size();
      for (std::size_t k = 0; k < mine.size(); ++k)
        if (!progress || got.records[k].status != Status::not_run) made_[mine[k]] = std::move(got.records[k]);
      if (!progress) break;
      mine = std::move(again);
      wanted = std::move(again_wanted);
    }
  }

  const Plan& plan_;
  const ChildArgs& args_;
  IsolationDir dir_;
  std::vector<std::optional<Record>> made_;  // per unit, once its child has run
};

}  // namespace

std::vector<Record> execute(const Registry& reg, const Plan& plan, Executor& ex, const Execution& how) {
  std::unique_ptr<Children> children;
  if (how.isolate) children = std::make_unique<Children>(plan, how.child_args);
  Here here(reg, ex, how.eval);
  std::vector<Record> records;
  Progress progress(plan.units.size());
  for (std::size_t i = 0; i < plan.units.size(); ++i) {
    const Unit& unit = plan.units[i];
    progress.step(unit.describe(plan.jobs));
    Record r;
    if (!unit.skip.empty()) {
      r = plan.blank_record(unit);
      r.reason = unit.skip;
    } else {
      r = how.isolate ? children->record(i) : here.record(plan, unit);
    }
    if (how.made) how.made(unit, r);
    records.push_back(std::move(r));
  }
  return records;
}

StatusCounts::StatusCounts(const std::vector<Record>& records) {
  for (const Record& r : records) add(r.status);
}

void StatusCounts::add(Status s) {
  ok += s == Status::ok;
  skipped += s == Status::skipped;
  incorrect += s == Status::incorrect;
  not_emulated += s == Status::not_emulated;
  not_run += s == Status::not_run;
}

void print_device_lost(std::ostream& out, Executor& ex, int not_run) {
  if (auto fault = ex.lost())
    out << "DEVICE LOST: " << *fault << "\n  " << not_run
        << " configurations after the fault were not run (--isolate runs each variant in its own process)\n";
}

std::string write_report_for(const Report& report, const std::string& path, const Executor& ex) {
  const std::string out = output_path(path, ex);
  write_report(report, out);
  return out;
}

}  // namespace wb::cli
