#include <CLI/CLI.hpp>
#include <iostream>

#include "base/cpu_isa.h"
#include "base/errors.h"
#include "base/exit_codes.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/options.h"
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

CLI::App* add_subcommand(CLI::App& app, const std::string& name, const std::string& help) {
  return app.add_subcommand(name, help);
}

int exit_code_for(const std::exception_ptr& e, std::ostream& err) {
  return program::exit_code_for(e, err, exit_policy());
}

int main(int argc, char** argv, const Registry& registry) {
  registry_in_use = &registry;
  return main(argc, argv);
}

namespace {

// Registers every command, parses the command line and runs the command it names
// (main maps what escapes).
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
      "  wb new gelu_forward my_kernel   (a new rung's file, at the next free id)\n"
      "  wb run layernorm_forward --variant 4 --shape llmc-dev\n"
      "  wb check --all --backend cpu\n"
      "  wb sweep layernorm_forward --shape llmc-dev --out 'results/{device}/layernorm_forward.json'\n"
      "  wb sweep --all --seed 7 --shard 2/4 --out shard2.json   (on each of 4 machines)\n"
      "  wb merge shard*.json --out 'results/{device}/all.json'\n"
      "  wb best results/<device>/*.json --out results/best.json\n"
      "  wb compare results/<device>/baseline/layernorm_forward.json new.json --max-slowdown 5%");
  const std::string line = command_line(argc, argv);
  const Command commands[] = {
      add_list_command(app),        add_run_command(app, line),   add_check_command(app, line),
      add_sweep_command(app, line), add_merge_command(app, line), add_best_command(app),
      add_table_command(app, line), add_compare_command(app),     add_predict_command(app, line),
      add_device_command(app),      add_dump_command(app),        add_new_command(app)};
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
  for (const Command& c : commands)
    if (*c.cli) return c.run();
  return kBadUsage;
}

}  // namespace

int main(int argc, char** argv) {
  return program::guarded_main(
      exit_policy(), [&] { return run_command(argc, argv); }, std::cerr);
}

}  // namespace wb::cli
