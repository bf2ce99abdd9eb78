#include <CLI/CLI.hpp>
#include <iostream>

#include "kernels/cpu/isa.h"
#include "kernels/errors.h"
#include "kernels/program.h"
#include "workbench/cli/commands.h"
#include "workbench/runtime/context.h"

namespace wb::cli {
namespace {

const Registry* registry_in_use = nullptr;  // set by main; null: the global one

const program::ExitPolicy& exit_policy() {
  static const program::ExitPolicy policy = [] {
    program::ExitPolicy p;
    p.program = "wb";
    p.backend_error_code = kNoDevice;  // a CUDA call failed outside a variant's evaluation
    p.backend_error_text = "error: the device failed: ";
    p.out_of_memory_hint = "a smaller --shape, or fewer variants at once, may fit";
    p.bug_text = "a bug in wb; please report it with the command line";
    return p;
  }();
  return policy;
}

}  // namespace

const Registry& registry() { return registry_in_use ? *registry_in_use : Registry::global(); }

int exit_code_for(const std::exception_ptr& e, std::ostream& err) {
  return program::exit_code_for(e, err, exit_policy());
}

int main(int argc, char** argv, const Registry& registry) {
  registry_in_use = &registry;
  return main(argc, argv);
}

namespace {

// Parses the command line and runs the command (main maps what escapes).
int run_command(int argc, char** argv) {
  CLI::App app{
      "wb: a workbench for the kernels of one GPT-2 training step. Every op has numbered variants;\n"
      "wb checks them against the CPU reference, times them and writes JSON reports."};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 a check failed (also: a variant's fault lost the device and the rest was not run),\n"
      "2 bad usage or input (also: out of memory), 3 no usable device, 4 internal error.\n"
      "Examples:\n"
      "  wb list layernorm_forward\n"
      "  wb run layernorm_forward --variant 4 --shape llmc-dev\n"
      "  wb check --all --backend cpu\n"
      "  wb sweep layernorm_forward --shape llmc-dev --out 'results/{device}/layernorm_forward.json'\n"
      "  wb sweep --all --seed 7 --shard 2/4 --out shard2.json   (on each of 4 machines)\n"
      "  wb merge shard*.json --out 'results/{device}/all.json'\n"
      "  wb best results/<device>/*.json --out results/best.json\n"
      "  wb compare results/<device>/baseline/layernorm_forward.json new.json --max-slowdown 5%");
  const std::string command = command_line(argc, argv);
  const std::string shape_help = "a preset (gpt2-124m, llmc-dev), dims (B=8,T=1024,C=768), or both (llmc-dev,T=256)";

  ListOptions list_o;
  list_o.results_dir = default_results_dir();
  auto* list_cmd = app.add_subcommand("list",
                                      "ops and their variants: backend, id, name, numeric class, "
                                      "block sizes, requirements, verification");
  list_cmd->add_option("op", list_o.op, "only this op");
  list_cmd->add_option("--results", list_o.results_dir, "folder of committed reports, for the verification status")
      ->capture_default_str();

  RunOptions run_o;
  run_o.command = command;
  auto* run_cmd = app.add_subcommand("run", "validate one variant, then time it");
  run_cmd->add_option("op", run_o.op, "the op, e.g. layernorm_forward")->required();
  run_cmd->add_option("--variant,-v", run_o.variant, "variant id")->required();
  run_cmd->add_option("--backend", run_o.backend, "cpu, cuda or emu (default: cuda when a device is usable)");
  run_cmd->add_option("--block-size", run_o.block_size, "block size (default: the variant's)");
  run_cmd->add_option("--param", run_o.params, "other launch parameter, NAME=VALUE (repeatable)");
  run_cmd->add_option("--shape", run_o.shape, shape_help)->capture_default_str();
  run_cmd->add_option("--seed", run_o.seed, "seed of the random inputs (default: fresh)");
  run_cmd->add_option("--json", run_o.json, "also write the result as a wb.report report");
  run_cmd->add_option("--repetitions", run_o.repetitions, "timed repetitions (default: cuda 20, cpu 5)");
  run_cmd->add_option("--min-time", run_o.min_time_s, "seconds per repetition (default: cuda 0.01, cpu 0.05)");
  run_cmd->add_flag("--no-flush", run_o.no_flush,
                    "time with warm caches (default: the last-level cache is flushed before every timed launch)");
  run_cmd->add_flag("--strict-sync", run_o.strict_sync,
                    "emu: a __syncthreads reached while threads of the block have exited is a synccheck fault "
                    "(default: a note)");
  run_cmd->add_flag("--isolate", run_o.isolate,
                    "run the variant in a child process: a crash becomes an incorrect result");

  CheckOptions check_o;
  check_o.command = command;
  auto* check_cmd = app.add_subcommand(
      "check", "correctness only: every variant, every legal launch configuration, several shapes, fresh seeds");
  check_cmd->add_option("op", check_o.op, "the op to check");
  check_cmd->add_flag("--all", check_o.all, "check every op");
  check_cmd->add_option("--backend", check_o.backend, "cpu, cuda or emu (default: cuda when a device is usable)");
  check_cmd->add_option("--variants", check_o.variants, "ids to check, e.g. 1,3 (default: all)");
  check_cmd->add_option("--shapes", check_o.shapes,
                        "only these check shapes: tiny, odd, gpt2 (emu: wide), long, vocab (default: all)");
  check_cmd->add_option("--block-sizes", check_o.block_sizes,
                        "only these block sizes, e.g. 32,128 (a variant with none of them checks its default; "
                        "default: all)");
  check_cmd->add_option("--seed", check_o.seed, "base seed (default: fresh)");
  check_cmd->add_option("--misalign", check_o.misalign,
                        "start every tensor this many bytes (4, 8 or 12) off a 16-byte boundary: variants with "
                        "vector accesses must skip or fall back, never fault");
  check_cmd->add_flag("--strict-sync", check_o.strict_sync,
                      "emu: a __syncthreads reached while threads of the block have exited is a synccheck fault "
                      "(default: a note on the record)");
  check_cmd->add_flag("--verbose", check_o.verbose, "a line per launch configuration");
  check_cmd->add_option("--json", check_o.json, "also write the results as a wb.report report");
  check_cmd->add_flag(
      "--isolate", check_o.isolate,
      "run each variant in a child process, so that a crash or a device-losing fault costs that variant only");

  SweepOptions sweep_o;
  sweep_o.command = command;
  auto* sweep_cmd = app.add_subcommand(
      "sweep", "validate and time every (variant, block size) of an op at one shape; write a report");
  sweep_cmd->add_option("op", sweep_o.op, "the op to sweep");
  sweep_cmd->add_flag("--all", sweep_o.all, "sweep every op");
  sweep_cmd->add_option("--backend", sweep_o.backend, "cpu, cuda or emu (default: cuda when a device is usable)");
  sweep_cmd->add_option("--variants", sweep_o.variants, "ids, e.g. 1,3, or all")->capture_default_str();
  sweep_cmd->add_option("--block-sizes", sweep_o.block_sizes, "e.g. 128,256, or all")->capture_default_str();
  sweep_cmd->add_option("--shape", sweep_o.shape, shape_help)->capture_default_str();
  sweep_cmd->add_option("--workloads", sweep_o.workloads,
                        "sweep every (op, shape) of a trainer --dump-workloads file instead");
  sweep_cmd->add_option("--seed", sweep_o.seed, "seed of the random inputs (default: fresh)");
  sweep_cmd->add_option("--out", sweep_o.out, "where to write the wb.report report ({device}: the device's slug)")
      ->required();
  sweep_cmd->add_option("--repetitions", sweep_o.repetitions, "timed repetitions (default: cuda 20, cpu 5)");
  sweep_cmd->add_option("--min-time", sweep_o.min_time_s, "seconds per repetition (default: cuda 0.01, cpu 0.05)");
  sweep_cmd->add_flag("--no-flush", sweep_o.no_flush,
                      "time with warm caches (default: the last-level cache is flushed before every timed launch)");
  sweep_cmd->add_flag(
      "--isolate", sweep_o.isolate,
      "run each variant in a child process, so that a crash or a device-losing fault costs that variant only");
  sweep_cmd->add_flag("--isolated-child", sweep_o.isolated_child, "internal: run as a child of --isolate")->group("");
  sweep_cmd->add_option("--shard", sweep_o.shard,
                        "K/N: measure only the K-th of N round-robin slices of the sweep's units, K from 1 to N "
                        "(needs --seed; wb merge joins the shards' reports)");

  MergeOptions merge_o;
  merge_o.command = command;
  auto* merge_cmd = app.add_subcommand(
      "merge", "join the reports of the shards of one sweep (wb sweep --shard K/N) into the report of the whole sweep");
  merge_cmd->add_option("shards", merge_o.shards, "the shards' reports, one per shard")->required();
  merge_cmd->add_option("--out", merge_o.out, "the merged report to write ({device}: the device's slug)")->required();
  merge_cmd->add_flag("--allow-missing", merge_o.allow_missing,
                      "merge even when shards are missing (with a warning; the report names the missing ones)");

  BestOptions best_o;
  auto* best_cmd = app.add_subcommand(
      "best", "the best variant per op and shape from reports, into the section of their device in best.json");
  best_cmd->add_option("reports", best_o.reports, "wb.report files (each device's reports make its section)");
  best_cmd->add_option("--out", best_o.out, "the best.json to update (the other devices' sections are kept)");
  best_cmd->add_flag("--replace", best_o.replace, "start --out afresh: only the sections of these reports");
  best_cmd->add_option("--show", best_o.show, "list the sections of this best.json (device, date, ops) and exit");
  best_cmd->add_option("--precision", best_o.precision, "fp32 (fp32 variants only), tf32 (fp32 and tf32) or bf16 (all)")
      ->capture_default_str();
  best_cmd->add_flag("--deterministic", best_o.deterministic,
                     "choose only among records whose two runs gave bitwise equal outputs");

  CompareOptions compare_o;
  auto* compare_cmd =
      app.add_subcommand("compare", "compare two reports record by record; exit 1 on a regression (for CI)");
  compare_cmd->add_option("base", compare_o.base, "the baseline report")->required();
  compare_cmd->add_option("new", compare_o.now, "the new report")->required();
  compare_cmd->add_option("--max-slowdown", compare_o.max_slowdown, "slowdown beyond the noise that fails, e.g. 5%")
      ->capture_default_str();
  compare_cmd->add_option("--format", compare_o.format, "text or markdown")->capture_default_str();

  DeviceOptions device_o;
  auto* device_cmd = app.add_subcommand(
      "device", "the device's properties and its measured ceilings: copy bandwidth and GEMM throughput");
  device_cmd->add_option("--backend", device_o.backend, "cpu, cuda or emu (default: cuda when a device is usable)");
  device_cmd->add_flag("--slug", device_o.slug_only, "print only the device's slug (the results/ folder name)");

  DumpOptions dump_o;
  auto* dump_cmd = app.add_subcommand(
      "dump", "write one op's random inputs and reference outputs as raw files and a manifest (for external checks)");
  dump_cmd->add_option("op", dump_o.op, "the op")->required();
  dump_cmd->add_option("--shape", dump_o.shape, shape_help)->capture_default_str();
  dump_cmd->add_option("--seed", dump_o.seed, "seed of the random inputs")->capture_default_str();
  dump_cmd->add_option("--out", dump_o.out, "folder to write")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "wb: error: " << e.what() << "\nRun 'wb --help' or 'wb <command> --help' for the options.\n";
    return kBadUsage;
  }

  cpu::check_isa_cap();  // a mistyped WB_CPU_ISA is bad input, not "no cap"
  if (*list_cmd) return list(list_o);
  if (*run_cmd) return run(run_o);
  if (*check_cmd) return check(check_o);
  if (*sweep_cmd) return sweep(sweep_o);
  if (*merge_cmd) return merge(merge_o);
  if (*dump_cmd) return dump(dump_o);
  if (*device_cmd) return device(device_o);
  if (*best_cmd) return best(best_o);
  if (*compare_cmd) return compare(compare_o);
  return kBadUsage;
}

}  // namespace

int main(int argc, char** argv) {
  return program::guarded_main(exit_policy(), [&] { return run_command(argc, argv); }, std::cerr);
}

}  // namespace wb::cli
