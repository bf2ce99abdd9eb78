// wb sweep: every (variant, launch configuration) of one op, of all ops at one
// shape, or of every call of a trainer workloads file, validated and timed, into a
// report; a table per (op, shape), fastest first. --shard K/N: only the K-th of N
// round-robin slices of those units (sweep_shards.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "kernels/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/pipeline_isolate.h"
#include "workbench/cli/output.h"
#include "workbench/cli/sweep_shards.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"
#include "workbench/runtime/table.h"
#include "workbench/runtime/workloads.h"

namespace wb::cli {
namespace {

// One (op, shape) of a sweep: every op at the --shape, or the calls of a workloads file.
struct SweepJob {
  const OpSpec* op;
  Shape shape;
};

// One line of the sweep's plan: a configuration to evaluate, or one skipped up front.
struct PlanItem {
  std::size_t job;
  const Variant* variant;
  ParamValues params;
  std::string skip;  // non-empty: not run, for this reason
};

std::vector<PlanItem> plan_sweep(const Registry& reg, const std::vector<SweepJob>& jobs, Backend b,
                                 const SweepOptions& o) {
  std::optional<std::vector<int>> sizes;
  if (o.block_sizes != "all") sizes = parse_int_list(o.block_sizes, "--block-sizes");
  std::vector<PlanItem> plan;
  std::set<int> legal_somewhere;
  std::set<int> all_legal;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    for (const Variant* v : select_variants(reg, *jobs[j].op, b, o.variants)) {
      const auto bs =
          std::find_if(v->params.begin(), v->params.end(), [](const TuningParam& p) { return p.name == "block_size"; });
      if (bs != v->params.end()) all_legal.insert(bs->values.begin(), bs->values.end());
      bool any = false;
      for (const ParamValues& p : v->all_params()) {
        if (sizes && bs != v->params.end()) {
          const int size = p.get("block_size");
          if (std::find(sizes->begin(), sizes->end(), size) == sizes->end()) continue;
          legal_somewhere.insert(size);
        }
        plan.push_back({j, v, p, ""});
        any = true;
      }
      if (!any)
        plan.push_back({j, v, ParamValues{},
                        "none of the block sizes asked for is legal (legal: " + describe_values(bs->values) + ")"});
    }
  }
  if (sizes) {
    if (all_legal.empty()) throw UsageError("--block-sizes does not apply: no selected variant takes a block size");
    for (int s : *sizes) {
      if (!legal_somewhere.count(s)) {
        std::string legal;
        for (int v : all_legal) legal += (legal.empty() ? "" : ", ") + std::to_string(v);
        throw UsageError("block size " + std::to_string(s) + " is not legal for any selected variant (legal: " + legal +
                         ")");
      }
    }
  }
  return plan;
}

}  // namespace

int sweep(const SweepOptions& o) {
  const Registry& reg = registry();
  std::optional<ShardSpec> shard;
  if (o.shard) {
    shard = parse_shard(*o.shard);
    if (!o.seed)
      throw UsageError("--shard needs --seed: every shard must draw the same inputs for their reports to merge");
  }
  std::vector<SweepJob> jobs;
  if (!o.workloads.empty()) {
    if (o.all || !o.op.empty()) throw UsageError("--workloads names the ops itself: give no op and no --all");
    if (o.variants != "all") throw UsageError("--variants selects ids of one op; with --workloads leave it out");
    for (const Workload& w : read_workloads(o.workloads, reg)) jobs.push_back({&reg.op(w.op), w.shape});
  } else {
    if (o.all == !o.op.empty()) throw UsageError("give one op, --all or --workloads FILE");
    if (o.all && o.variants != "all") throw UsageError("--variants selects ids of one op; with --all leave it out");
    const Shape shape = parse_shape(o.shape);
    for (const OpSpec* op : o.all ? reg.ops() : std::vector<const OpSpec*>{&reg.op(o.op)}) {
      op->check_shape(shape);
      jobs.push_back({op, shape});
    }
  }
  const TimingOptions timing = timing_options(o.repetitions, o.min_time_s, o.no_flush);
  const Backend b = resolve_backend(o.backend);
  if (b == Backend::emu)
    throw UsageError(
        "wb sweep times variants, and the emu backend is never timed; check them with wb check --backend emu");
  std::vector<PlanItem> plan = plan_sweep(reg, jobs, b, o);
  const uint64_t seed = resolve_seed(o.seed);
  // --shard: the units (items of the plan) of this shard only, and what identifies the
  // whole sweep to wb merge.
  std::optional<ShardInfo> shard_info;
  if (shard) {
    std::vector<std::string> keys;
    std::set<std::string> seen;
    for (const PlanItem& item : plan) {
      keys.push_back(unit_key(record_for(*jobs[item.job].op, *item.variant, item.params, jobs[item.job].shape)));
      if (!seen.insert(keys.back()).second)
        throw UsageError("the sweep measures " + keys.back() +
                         " twice (a variant or a workload given twice?): its shards could not be merged");
    }
    shard_info = ShardInfo{shard->index, shard->count, int64_t(plan.size()), plan_fingerprint(keys), seed};
    std::vector<PlanItem> mine;
    for (std::size_t unit = 0; unit < plan.size(); ++unit)
      if (in_shard(int64_t(unit), *shard)) mine.push_back(plan[unit]);
    plan = std::move(mine);
  }

  auto ex = make_executor(b);
  for (const SweepJob& job : jobs) check_session_fits(*job.op, job.shape, *ex);  // before the ceilings are measured
  Report report{make_context(*ex, timing, o.command), {}};
  report.context.shard = shard_info;
  // A child of --isolate leaves the ceilings to its parent, which measures them once;
  // an empty shard measures nothing.
  if (!o.isolated_child && !plan.empty()) report.context.ceilings = ex->measure_ceilings();
  // --isolate: one child per (op, shape, variant), the same seed, the planned block
  // sizes of that variant only.
  std::unique_ptr<IsolationDir> isolation;
  if (o.isolate) isolation = std::make_unique<IsolationDir>();
  std::map<std::pair<std::size_t, int>, ChildOutcome> children;
  auto isolated = [&](const PlanItem& item) {
    const SweepJob& job = jobs[item.job];
    const auto key = std::make_pair(item.job, item.variant->id);
    auto it = children.find(key);
    if (it == children.end()) {
      const std::string out = isolation->next_file("report");
      std::string dims;
      for (const std::string& d : job.op->dims)
        dims += (dims.empty() ? "" : ",") + d + "=" + std::to_string(job.shape.get(d));
      std::vector<std::string> args{"sweep",           job.op->name,
                                    "--backend",       std::string(to_string(b)),
                                    "--variants",      std::to_string(item.variant->id),
                                    "--shape",         dims,
                                    "--seed",          std::to_string(seed),
                                    "--out",           out,
                                    "--isolated-child"};
      if (o.block_sizes != "all" || shard) {  // a shard's child measures the shard's block sizes only
        std::string sizes;
        for (const PlanItem& other : plan)
          if (other.job == item.job && other.variant == item.variant && other.skip.empty())
            if (const auto bs = other.params.find("block_size"))
              sizes += (sizes.empty() ? "" : ",") + std::to_string(*bs);
        if (!sizes.empty()) args.insert(args.end(), {"--block-sizes", sizes});
      }
      if (o.repetitions) args.insert(args.end(), {"--repetitions", std::to_string(*o.repetitions)});
      if (o.min_time_s) args.insert(args.end(), {"--min-time", fmt::format("{}", *o.min_time_s)});
      if (o.no_flush) args.push_back("--no-flush");
      it = children.emplace(key, run_child(args, out, *isolation)).first;
    }
    const ChildOutcome& child = it->second;
    if (child.report)
      for (const Record& r : child.report->records)
        if (r.variant == item.variant->id && r.params == item.params) return r;
    Record r = record_for(*job.op, *item.variant, item.params, job.shape);
    r.seed = seed;
    r.status = Status::incorrect;
    r.reason = child.report ? "the child process reported no result for this configuration" : child.failure;
    return r;
  };
  const auto records_start = std::chrono::steady_clock::now();
  std::vector<std::size_t> job_of;  // per record
  {
    Progress progress(plan.size());
    std::unique_ptr<Session> session;
    std::size_t session_job = jobs.size();
    EvalOptions eval;
    eval.timer = timer_for(*ex, timing);
    for (const PlanItem& item : plan) {
      const SweepJob& job = jobs[item.job];
      progress.step(item.variant->key() + " " + item.params.describe() + " " + job.op->describe_shape(job.shape));
      job_of.push_back(item.job);
      if (!item.skip.empty()) {
        Record r = record_for(*job.op, *item.variant, item.params, job.shape);
        r.seed = seed;
        r.reason = item.skip;
        report.records.push_back(r);
        continue;
      }
      if (o.isolate) {
        report.records.push_back(isolated(item));
        continue;
      }
      if (auto fault = ex->lost()) {  // no new problem goes on a lost device
        report.records.push_back(not_run_record(*job.op, *item.variant, item.params, job.shape, false, seed, *fault));
        continue;
      }
      if (session_job != item.job) {
        session.reset();  // free the previous problem's buffers first
        session = std::make_unique<Session>(reg, *job.op, job.shape, seed, *ex);
        session_job = item.job;
      }
      report.records.push_back(session->evaluate(*item.variant, item.params, eval));
    }
  }

  // The ceilings again after the records, each rate the faster of the two measurements
  // (ceilings.h, faster_of), when the records took long enough for a shared host's
  // bandwidth to drift (it does over a sweep's minutes) or one of them reads above the
  // roofline with more bytes than the last-level cache holds (the ceilings were measured
  // low). Not after every sweep: a measurement costs seconds (it first-touches buffers of
  // 256 MiB to 1 GiB), and a campaign runs dozens of sweeps of a few seconds each.
  constexpr double kDriftSeconds = 30;  // records that took longer: measure again
  const double records_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - records_start).count();
  const int64_t llc = report.context.device.l2_bytes;
  const auto above_roofline = [&](const Record& r) {
    return r.timing && above_ceiling(r.percent(report.context.ceilings).roofline, r.bytes, llc);
  };
  if (!o.isolated_child && !ex->lost() &&
      (records_s > kDriftSeconds || std::any_of(report.records.begin(), report.records.end(), above_roofline)))
    report.context.ceilings = faster_of(report.context.ceilings, ex->measure_ceilings(),
                                        "; measured again after the sweep's records, each rate the faster of the "
                                        "two measurements");

  // Per (op, shape), in the order of the plan: the timed records fastest first.
  std::vector<std::size_t> order(report.records.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (job_of[x] != job_of[y]) return job_of[x] < job_of[y];
    const Record &a = report.records[x], &c = report.records[y];
    const bool ta = bool(a.timing), tc = bool(c.timing);
    if (ta != tc) return ta;
    return ta && a.timing->median_s < c.timing->median_s;
  });
  std::vector<const Record*> sorted;
  for (std::size_t i : order) sorted.push_back(&report.records[i]);
  int incorrect = 0, not_run = 0;
  const Ceilings& ceil = report.context.ceilings;
  std::cout << "sweep on " << ex->device().name << " (" << to_string(b) << ", seed " << seed << "); ceilings: copy "
            << fmt::format("{:.1f} GB/s, fp32 GEMM {:.2f} TFLOP/s", ceil.copy_gbps, ceil.fp32_tflops)
            << (ceil.memory_gbps > 0 ? fmt::format("; memory {:.1f} GB/s (read {:.1f}, update {:.1f})", ceil.memory_gbps,
                                                   ceil.read_gbps, ceil.update_gbps)
                                     : std::string())
            << "\n";
  if (shard_info)
    std::cout << fmt::format("shard {}/{}: {} of the sweep's {} units (plan {}){}\n", shard_info->index,
                             shard_info->count, plan.size(), shard_info->units, shard_info->plan,
                             plan.empty() ? ": an empty shard, nothing to measure (no ceilings either)" : "");
  std::cout << "% peak: of the roofline, min(memory bandwidth x flops/byte, GEMM throughput of the numeric class)\n";
  std::string current;  // op and shape of the table being filled
  std::unique_ptr<TextTable> table;
  auto flush = [&] {
    if (table) table->print(std::cout, "  ");
  };
  for (const Record* r : sorted) {
    if (r->op + " " + r->shape_text() != current) {
      flush();
      current = r->op + " " + r->shape_text();
      std::cout << r->op << "  " << r->shape_text() << "\n";
      table = std::make_unique<TextTable>(std::vector<std::string>{"variant", "launch", "status", "median", "min", "cv",
                                                                   "GB/s", "TFLOP/s", "% peak", "max err", "note"});
    }
    incorrect += r->status == Status::incorrect;
    not_run += r->status == Status::not_run;
    const bool t = bool(r->timing);
    table->add({r->variant_label(), r->params.describe(), std::string(to_string(r->status)),
                t ? format_time(r->timing->median_s) : "-", t ? format_time(r->timing->min_s) : "-",
                t ? fmt::format("{:.1f}%", 100 * r->timing->cv) : "-", t ? fmt::format("{:.1f}", r->gbps()) : "-",
                t ? fmt::format("{:.3f}", r->tflops()) : "-",
                t ? fmt::format("{:.1f}%", r->percent(report.context.ceilings).roofline) : "-", format_errors(*r),
                r->reason});
  }
  flush();
  // Above the roofline with more bytes than the last-level cache holds: the ceiling is
  // wrong (or the byte model is), not the variant fast; said here, flagged in the report.
  int above = 0;
  for (const Record* r : sorted) {
    if (!above_roofline(*r)) continue;
    const double pct = r->percent(ceil).roofline;
    ++above;
    std::cout << fmt::format(
        "WARNING: {} {} {} at {}: {:.0f}% of the roofline while moving {:.1f} MB, more than the last-level cache "
        "({:.1f} MB): the ceiling is below what the op reaches; flagged above_ceiling in the report\n",
        r->op, r->variant_label(), r->params.describe(), r->shape_text(), pct, r->bytes * 1e-6, double(llc) * 1e-6);
  }
  if (above) std::cout << above << " records above the roofline beyond the last-level cache: ceilings " << ceil.method << "\n";
  if (auto fault = ex->lost())
    std::cout << "DEVICE LOST: " << *fault << "\n  " << not_run
              << " configurations after the fault were not run (--isolate runs each variant in its own process)\n";
  const std::string path = output_path(o.out, *ex);
  write_report(report, path);
  std::cout << "wrote " << path << " (" << report.records.size() << " records, " << incorrect << " incorrect"
            << (not_run ? fmt::format(", {} not run", not_run) : "")
            << (shard_info ? fmt::format("; shard {}/{}", shard_info->index, shard_info->count) : "") << ")\n";
  return incorrect || not_run ? kCheckFailed : kOk;
}

}  // namespace wb::cli
