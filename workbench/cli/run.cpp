// wb run: one variant, validated (twice, for determinism), timed, validated again.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "kernels/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/pipeline_isolate.h"
#include "workbench/cli/output.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"
#include "workbench/runtime/table.h"

namespace wb::cli {
namespace {

ParamValues parse_params(const Variant& v, const std::optional<int>& block_size,
                         const std::vector<std::string>& given) {
  ParamValues p;
  if (block_size) p.set("block_size", *block_size);
  for (const auto& item : given) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--param '" + item + "' is not of the form NAME=VALUE");
    const std::vector<int> value = parse_int_list(item.substr(eq + 1), "--param " + item.substr(0, eq));
    if (value.size() != 1) throw UsageError("--param " + item + ": give one value");
    p.set(item.substr(0, eq), value.front());
  }
  v.check_params(p);
  return v.complete(p);
}

void print_record(const Record& r, const Ceilings& ceilings) {
  std::cout << r.op << " " << r.variant_label() << "  [" << to_string(r.numeric) << "]\n";
  std::cout << "  shape   " << r.shape_text() << "  (seed " << r.seed << ")\n";
  std::cout << "  launch  " << r.params.describe() << "\n";
  if (r.status == Status::skipped || r.status == Status::not_emulated) {
    std::cout << "  " << (r.status == Status::skipped ? "SKIPPED " : "NOT EMULATED ") << r.reason << "\n";
    return;
  }
  if (r.status == Status::incorrect) std::cout << "  INCORRECT " << r.reason << "\n";
  std::string checks;
  for (const auto& c : r.errors) checks += (checks.empty() ? "" : "; ") + c.describe();
  if (!checks.empty()) std::cout << "  check   " << checks << "\n";
  if (r.deterministic) std::cout << "  deterministic " << format_deterministic(r) << "\n";
  if (r.timing) {
    const TimingStats& t = *r.timing;
    std::cout << fmt::format("  time    median {}, min {}, mean {}, cv {:.1f}% over {} repetitions of {} launches\n",
                             format_time(t.median_s), format_time(t.min_s), format_time(t.mean_s), 100 * t.cv,
                             t.repetitions, t.iterations);
    const PercentOfPeak pct = r.percent(ceilings);
    std::cout << fmt::format(
        "  rate    {:.1f} GB/s ({:.1f}% of copy), {:.3f} TFLOP/s ({:.1f}% of {} GEMM); {:.1f}% of the roofline\n",
        r.gbps(), pct.copy, r.tflops(), pct.matmul, to_string(r.numeric), pct.roofline);
    std::cout << fmt::format("  models  {:.4g} bytes, {:.4g} flops\n", r.bytes, r.flops);
  }
}

}  // namespace

int run(const RunOptions& o) {
  const Registry& reg = registry();
  const OpSpec& op = reg.op(o.op);
  const Shape shape = parse_shape(o.shape);
  op.check_shape(shape);
  const TimingOptions timing = timing_options(o.repetitions, o.min_time_s, o.no_flush);
  const Backend b = resolve_backend(o.backend);
  const Variant& v = reg.variant(op.name, b, o.variant);
  const ParamValues params = parse_params(v, o.block_size, o.params);

  const uint64_t seed = resolve_seed(o.seed);

  auto ex = make_executor(b);
  ex->set_strict_sync(o.strict_sync);
  Record r;
  ReportContext context;
  if (o.isolate) {
    // The same command narrowed to nothing else, in a child: its report (context and
    // ceilings included) stands for this run's, or its death is the variant's failure.
    check_session_fits(op, shape, *ex);
    IsolationDir isolation;
    const std::string out = isolation.next_file("report");
    std::vector<std::string> args{
        "run",     op.name, "--variant", std::to_string(v.id), "--backend", std::string(to_string(b)),
        "--shape", o.shape, "--seed",    std::to_string(seed), "--json",    out};
    for (const auto& [name, value] : params.items())
      args.insert(args.end(), {"--param", name + "=" + std::to_string(value)});
    if (o.repetitions) args.insert(args.end(), {"--repetitions", std::to_string(*o.repetitions)});
    if (o.min_time_s) args.insert(args.end(), {"--min-time", fmt::format("{}", *o.min_time_s)});
    if (o.no_flush) args.push_back("--no-flush");
    if (o.strict_sync) args.push_back("--strict-sync");
    const ChildOutcome child = run_child(args, out, isolation);
    if (child.report && child.report->records.size() == 1) {
      context = child.report->context;
      context.command = o.command;
      r = child.report->records.front();
    } else {
      context = make_context(*ex, timing, o.command);
      r = record_for(op, v, params, shape);
      r.seed = seed;
      r.status = Status::incorrect;
      r.reason = child.report ? "the child process reported no single result" : child.failure;
    }
  } else {
    Session session(reg, op, shape, seed, *ex);
    EvalOptions eval;
    if (ex->timed()) {
      eval.timer = timer_for(*ex, timing);
    } else {
      eval.check_launches = 1;
    }
    r = session.evaluate(v, params, eval);
    context = make_context(*ex, timing, o.command);
    if (r.timing) context.ceilings = ex->measure_ceilings();
  }
  print_record(r, context.ceilings);
  for (const std::string& n : r.notes) std::cout << "  note    " << n << "\n";
  if (!ex->timed() && r.status == Status::ok)
    std::cout << "  time    not measured: emulation checks logic (bounds, barriers, races), never speed\n";
  if (!o.json.empty()) {
    const std::string path = output_path(o.json, *ex);
    write_report(Report{context, {r}}, path);
    std::cout << "wrote " << path << "\n";
  }
  return r.status == Status::incorrect ? kCheckFailed : kOk;
}

}  // namespace wb::cli
