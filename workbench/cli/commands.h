#pragma once
// The `wb` command line: list, run, check, sweep, merge, best, table, compare, predict,
// device, dump, new.
// Exit codes: 0 ok, 1 a check failed (also: the device was lost to a variant's fault,
// and the configurations after it were not run), 2 bad usage or input (or more memory
// than the machine has), 3 no usable device, 4 an internal error (a bug in wb).
//
// The files of workbench/cli/: `<command>.cpp` is one command, its options (registered
// with CLI11 there) and its work; `<command>_<what>.{h,cpp}` is logic of that command
// with its own tests (compare_reports, list_verification, sweep_shards);
// `pipeline*.{h,cpp}` is what check, sweep and run go through (plan, execute here or
// in a child with --isolate, time); options.{h,cpp} the option groups several commands
// share; output.{h,cpp} what several print; app.cpp the program that ties them.
#include <exception>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "base/exit_codes.h"
#include "contract/registry.h"

namespace CLI {
class App;
}

namespace wb::cli {

constexpr int kOk = program::kOk, kCheckFailed = program::kFailed, kBadUsage = program::kBadInput,
              kNoDevice = program::kNoDevice, kInternalError = program::kInternalError;

int main(int argc, char** argv);
// The same with another registry than Registry::global(): a test program that plants
// variants of its own (a kernel that faults) runs the commands over its registry.
int main(int argc, char** argv, const Registry& registry);

// The registry the commands read: Registry::global(), or the one given to main.
const Registry& registry();

// The exit code of an exception that escaped a command, after writing its message to
// `err` (base/exit_codes.h with wb's policy): bad input 2, running out of memory or
// another resource 2, no usable device or a device that failed 3, anything else 4 --
// an internal error never reads as a failed check.
int exit_code_for(const std::exception_ptr& e, std::ostream& err);

// A command registered on the app: its subcommand, and what runs it once the command
// line has been parsed into the options it registered (its exit code).
struct Command {
  CLI::App* cli = nullptr;
  std::function<int()> run;
};

// The subcommand `name` on `app`, with its help (what new_command needs of CLI11, so
// that this header does without it).
CLI::App* add_subcommand(CLI::App& app, const std::string& name, const std::string& help);

// A command whose options are the struct Options: its subcommand, on which `add_options`
// registers the options (their defaults `initial`'s), and its run, `work` on the options
// the parse filled. The options are shared by the parse, which writes them, and the run,
// which reads them after it.
template <class Options>
Command new_command(CLI::App& app, const std::string& name, const std::string& help,
                    void (*add_options)(CLI::App&, Options&), int (*work)(const Options&), Options initial = {}) {
  auto o = std::make_shared<Options>(std::move(initial));
  CLI::App* cmd = add_subcommand(app, name, help);
  add_options(*cmd, *o);
  return {cmd, [o, work] { return work(*o); }};
}
// The same for a command whose report records the whole command line (Options::command).
template <class Options>
Command new_command(CLI::App& app, const std::string& command_line, const std::string& name, const std::string& help,
                    void (*add_options)(CLI::App&, Options&), int (*work)(const Options&)) {
  Options initial;
  initial.command = command_line;
  return new_command(app, name, help, add_options, work, std::move(initial));
}

// Each command adds its subcommand and its options to `app` (in its own file);
// `command_line` is the whole command line, for the reports that record it.
Command add_list_command(CLI::App& app);
Command add_run_command(CLI::App& app, const std::string& command_line);
Command add_check_command(CLI::App& app, const std::string& command_line);
Command add_sweep_command(CLI::App& app, const std::string& command_line);
Command add_merge_command(CLI::App& app, const std::string& command_line);
Command add_best_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_predict_command(CLI::App& app, const std::string& command_line);
Command add_device_command(CLI::App& app);
Command add_dump_command(CLI::App& app);
Command add_new_command(CLI::App& app);
Command add_table_command(CLI::App& app, const std::string& command_line);

}  // namespace wb::cli
