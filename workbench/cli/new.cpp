// wb new OP NAME [--backend cuda|cpu] [--root DIR]: writes a new rung's file at the op's
// next free id, with the glue for its argument struct and its contract as comments, a
// stub that every check skips as not implemented (new_variant.h), and prints the
// commands that follow.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <string>

#include "base/errors.h"
#include "base/files.h"
#include "contract/types.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/new_variant.h"

namespace wb::cli {
namespace {

struct NewOptions {
  std::string op;
  std::string name;
  std::string backend = "cuda";
  std::string root = ".";
};

int new_variant(const NewOptions& o) {
  if (o.backend != "cuda" && o.backend != "cpu")
    throw UsageError("--backend " + o.backend + ": wb new writes cuda or cpu rungs");
  const Backend backend = parse_backend(o.backend);
  const std::filesystem::path root(o.root);
  const Scaffold s = scaffold_variant(registry(), root, o.op, o.name, backend);
  const std::filesystem::path target = root / s.path;
  if (std::filesystem::exists(target)) throw UsageError(target.string() + " exists already; wb new never overwrites");
  std::filesystem::create_directories(target.parent_path());
  write_file_atomically(target, s.text);
  std::cout << next_steps(s, o.op, backend);
  return kOk;
}

void add_options(CLI::App& cmd, NewOptions& o) {
  cmd.add_option("op", o.op, "the op the rung implements (wb list names them)")->required();
  cmd.add_option("name", o.name, "the rung's short name: lower case, digits and '_' (vec4, warp_per_row)")->required();
  cmd.add_option("--backend", o.backend, "cuda (a .cu file, also run by the emulator) or cpu")->capture_default_str();
  cmd.add_option("--root", o.root, "the source tree to write into (its variants/ folder)")->capture_default_str();
}

}  // namespace

Command add_new_command(CLI::App& app) {
  return new_command(app, "new",
                     "write a new rung's file at the op's next free id: the glue, the op's contract as comments, "
                     "a stub every check skips as not implemented",
                     add_options, new_variant);
}

}  // namespace wb::cli
