#pragma once
// `wb new OP NAME`'s work, apart from its command line so that tests call it: the text
// of a new rung's file, at the op's next free id, with the glue for the op's argument
// struct and the op's contract as comments. The rung starts as a stub marked "not
// implemented": a requirement that never holds, so every check skips it with that
// reason, `wb list` shows it, the trainer never picks it and the emulated-coverage test
// fails until the kernel is written -- never a silent pass.
#include <filesystem>
#include <string>

#include "contract/registry.h"

namespace wb::cli {

struct Scaffold {
  std::filesystem::path path;  // relative to the root: variants/<op>/NN_name.cu
  int id = 0;
  std::string text;
};

// The requirement text that marks a scaffold's stub (tests and the README find it).
inline constexpr const char* kStubRequirement = "not implemented (wb new's stub)";

// The file for a new `backend` (cuda or cpu) rung of `op` named `name` under the source
// tree `root`: its id is one above every id of that backend in variants/<op>/. Throws
// UsageError on an unknown op, a name that is not lower case, digits and '_', a
// backend other than cpu or cuda, or a root that is no wb source tree.
Scaffold scaffold_variant(const Registry& reg, const std::filesystem::path& root, const std::string& op,
                          const std::string& name, Backend backend);

// The commands that follow writing it: build, list, check, the bookkeeping.
std::string next_steps(const Scaffold& s, const std::string& op, Backend backend);

}  // namespace wb::cli
