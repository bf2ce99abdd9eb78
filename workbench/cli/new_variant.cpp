#include "workbench/cli/new_variant.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "contract/op.h"
#include "contract/shape.h"

namespace wb::cli {
namespace {

namespace fs = std::filesystem;

// gelu_forward_bf16 -> GeluForwardBf16Args: the alias every op's header declares.
std::string args_name(const std::string& op) {
  std::string out;
  bool upper = true;
  for (char c : op) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? char(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out + "Args";
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The header that declares the op's argument struct: contract/ops/<op>.h, or the fp32
// twin's for an op on bf16 storage (gelu_forward_bf16's struct is in gelu_forward.h).
std::string args_header(const fs::path& root, const std::string& op, const std::string& args) {
  std::vector<std::string> candidates = {op};
  const std::string suffix = "_bf16";
  if (op.size() > suffix.size() && op.compare(op.size() - suffix.size(), suffix.size(), suffix) == 0)
    candidates.push_back(op.substr(0, op.size() - suffix.size()));
  const std::regex declared("(using|struct)\\s+" + args + "\\b");
  for (const std::string& c : candidates) {
    const fs::path header = root / "contract" / "ops" / (c + ".h");
    if (fs::exists(header) && std::regex_search(read_text(header), declared)) return "contract/ops/" + c + ".h";
  }
  throw UsageError("no header under " + (root / "contract" / "ops").string() + " declares " + args + ", " + op +
                   "'s argument struct: is " + root.string() + " a wb source tree of this wb's version?");
}

// One above every id of `backend` among the files of variants/<op>/ (1 when none). A
// Triton rung (NN_triton_name.py) takes a CUDA id.
int next_free_id(const fs::path& folder, Backend backend) {
  const std::regex cuda_file(R"(^0*([0-9]+)_([a-z0-9_]+\.cu|triton_[a-z0-9_]+\.py)$)"),
      cpu_file(R"(^cpu_0*([0-9]+)_[a-z0-9_]+\.cpp$)");
  int next = 1;
  if (!fs::exists(folder)) return next;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string file = entry.path().filename().string();
    std::smatch m;
    if (std::regex_match(file, m, backend == Backend::cpu ? cpu_file : cuda_file))
      next = std::max(next, std::stoi(m[1].str()) + 1);
  }
  return next;
}

std::string two_digits(int id) { return (id < 10 ? "0" : "") + std::to_string(id); }

// The op's contract as comment lines: its summary, tensors with what a rung must do to
// each, scalars, and the shapes the emulator checks.
std::string contract_comment(const OpSpec& spec, const std::string& header) {
  std::string c;
  c += "// The contract of " + spec.name + " (" + header + "; `wb list " + spec.name + "` shows it):\n";
  c += "//   " + spec.summary + "\n";
  std::string dims;
  for (const auto& d : spec.dims) dims += (dims.empty() ? "" : ", ") + d;
  c += "//   Shape dims: " + dims + ". Tensors are dense, row-major, in the order of their extents.\n";
  for (const TensorSpec& t : spec.tensors) {
    c += "//   " + std::string(to_string(t.role)) + " " + t.name + " " + t.extents_text() + " " +
         std::string(to_string(t.dtype));
    if (t.role == Role::input)
      c += ": read only, left as it was";
    else if (t.role == Role::output)
      c += ": overwritten, every element (outputs are NaN before each run)";
    else
      c += ": accumulated or updated in place (add to it, never overwrite)";
    if (t.optional) c += "; may be null";
    c += "\n";
  }
  for (const ScalarSpec& s : spec.scalars) c += "//   scalar " + s.name + ": " + s.doc + "\n";
  c += "// Checked against the CPU reference at every legal launch configuration and these\n";
  c += "// shapes (under the emulator; it must run at one of odd, ragged, ragged8):\n";
  for (const CheckShape& s : named_check_shapes(true))
    c += "//   " + s.name + ": " + spec.describe_shape(s.shape) + "\n";
  return c;
}

std::string cuda_text(const OpSpec& spec, const std::string& header, const std::string& args, const std::string& name,
                      int id) {
  const std::string n = std::to_string(id);
  std::string t;
  t += "// " + spec.name + ", CUDA variant " + n + ": " + name + " (written by `wb new`: fill in every TODO).\n";
  t += "//\n";
  t += "// Idea: TODO(wb new): what this rung does, in a few lines.\n";
  t += "// Why it should beat the variant before it: TODO(wb new).\n";
  t += "// Limits: TODO(wb new): the shapes or configurations it cannot run, and why.\n";
  t += "//\n";
  t += contract_comment(spec, header);
  t += "//\n";
  t += "// A stub until then: the requirement \"" + std::string(kStubRequirement) + "\" below never holds,\n";
  t += "// so every check skips this rung with that reason and the trainer never picks it.\n";
  t += "// Write the kernel, then delete that requirement. Porting a CUDA kernel: docs/porting.md.\n";
  t += "#include <cstdint>\n\n";
  t += "#include \"" + header + "\"\n";
  t += "#include \"device/cuda/dialect.cuh\"\n";
  t += "#include \"device/cuda/runtime.h\"\n\n";
  t += "namespace wb::variants {\nnamespace {\n\n";
  t += "// TODO(wb new): the kernel. One thread per output element is the usual first rung.\n";
  t += "__global__ void " + name + "_kernel(" + args + " a) {\n";
  t += "  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;\n";
  t += "  (void)a;\n  (void)i;\n}\n\n";
  t += "void launch(const " + args + "& a, const Launch& l) {\n";
  t += "  const int block = l.block_size();\n";
  t += "  const int64_t threads = 1;  // TODO(wb new): the threads the kernel needs\n";
  t += "  WB_LAUNCH(" + name + "_kernel, cuda::grid_for(threads, block), block, 0, cuda::stream(l), a);\n}\n\n";
  t += "}  // namespace\n\n";
  t += "Variant " + spec.name + "_cuda_" + n + "() {\n";
  t += "  Variant v = Variant::of(&launch);\n";
  t += "  v.summary = \"TODO(wb new): one line, the idea\";\n";
  t += "  v.params = {block_size_param()};\n";
  t += "  // The stub's mark: delete it once the kernel is written.\n";
  t += "  v.requirements = {{\"" + std::string(kStubRequirement) + "\", [](const Shape&) { return false; }}};\n";
  t += "  return v;\n}\n\n";
  t += "}  // namespace wb::variants\n";
  return t;
}

std::string cpu_text(const OpSpec& spec, const std::string& header, const std::string& args, const std::string& name,
                     int id) {
  const std::string n = std::to_string(id);
  std::string t;
  t += "// " + spec.name + ", CPU variant " + n + ": " + name + " (written by `wb new`: fill in every TODO).\n";
  t += "//\n";
  t += "// Idea: TODO(wb new): what this rung does, in a few lines.\n";
  t += "// Why it should beat the variant before it: TODO(wb new).\n";
  t += "// Limits: TODO(wb new): the shapes it cannot run, and why.\n";
  t += "//\n";
  t += contract_comment(spec, header);
  t += "//\n";
  t += "// A stub until then: the requirement \"" + std::string(kStubRequirement) + "\" below never holds,\n";
  t += "// so every check skips this rung with that reason and the trainer never picks it.\n";
  t += "// Write the loops, then delete that requirement.\n";
  t += "#include \"" + header + "\"\n";
  t += "#include \"device/cpu/threads.h\"\n\n";
  t += "namespace wb::variants {\nnamespace {\n\n";
  t += "// TODO(wb new): the loops; every parallel region opens with\n";
  t += "// `#pragma omp parallel for num_threads(cpu::threads(l))`.\n";
  t += "void launch(const " + args + "& a, const Launch& l) {\n";
  t += "  (void)a;\n  (void)l;\n}\n\n";
  t += "}  // namespace\n\n";
  t += "Variant " + spec.name + "_cpu_" + n + "() {\n";
  t += "  Variant v = Variant::of(&launch);\n";
  t += "  v.summary = \"TODO(wb new): one line, the idea\";\n";
  t += "  v.params = {cpu::threads_param()};\n";
  t += "  // The stub's mark: delete it once the loops are written.\n";
  t += "  v.requirements = {{\"" + std::string(kStubRequirement) + "\", [](const Shape&) { return false; }}};\n";
  t += "  return v;\n}\n\n";
  t += "}  // namespace wb::variants\n";
  return t;
}

}  // namespace

Scaffold scaffold_variant(const Registry& reg, const fs::path& root, const std::string& op, const std::string& name,
                          Backend backend) {
  const OpSpec& spec = reg.op(op);  // UsageError naming the ops
  if (backend != Backend::cuda && backend != Backend::cpu)
    throw UsageError("wb new writes cuda or cpu rungs (an emu run is a cuda rung's emulated twin)");
  static const std::regex legal("^[a-z][a-z0-9_]*$");
  if (!std::regex_match(name, legal))
    throw UsageError("'" + name + "' cannot name a variant: lower case letters, digits and '_', starting with a letter");
  if (!fs::is_directory(root / "variants") || !fs::is_directory(root / "contract" / "ops"))
    throw UsageError(root.string() + " is no wb source tree (no variants/ or contract/ops/): run wb new from the "
                     "repository's root or pass --root");
  const std::string args = args_name(spec.name);
  const std::string header = args_header(root, spec.name, args);
  Scaffold s;
  const fs::path folder = fs::path("variants") / spec.name;
  s.id = next_free_id(root / folder, backend);
  const std::string stem = (backend == Backend::cpu ? "cpu_" : "") + two_digits(s.id) + "_" + name;
  s.path = folder / (stem + (backend == Backend::cpu ? ".cpp" : ".cu"));
  s.text = backend == Backend::cpu ? cpu_text(spec, header, args, name, s.id) : cuda_text(spec, header, args, name, s.id);
  return s;
}

std::string next_steps(const Scaffold& s, const std::string& op, Backend backend) {
  const std::string id = std::to_string(s.id);
  const std::string check_backend = backend == Backend::cpu ? "cpu" : "emu";
  std::vector<std::pair<std::string, std::string>> steps = {
      {"cmake --build build --target wb", "the build finds the file by its name"},
      {"build/wb list " + op, "its row"},
      {"build/wb check " + op + " --backend " + check_backend + " --variants " + id, "every check shape"}};
  if (backend == Backend::cuda) {
    steps.push_back({"build/wb check --all --backend emu --json results/emu/check.json", "the emulation report"});
    steps.push_back({"build/wb check " + op + " --backend cuda --variants " + id, "on a GPU"});
  }
  std::size_t width = 0;
  for (const auto& step : steps) width = std::max(width, step.first.size());
  std::string t = "Wrote " + s.path.string() + ": " + std::string(to_string(backend)) + " variant " + id + " of " +
                  op + ", a stub that every check skips as \"" + kStubRequirement +
                  "\" until its kernel is written and that requirement deleted. Then:\n";
  for (const auto& [command, what] : steps)
    t += "  " + command + std::string(width - command.size() + 2, ' ') + "# " + what + "\n";
  t += "Every step: README.md, \"Adding a variant\"; porting a CUDA kernel: docs/porting.md.\n";
  return t;
}

}  // namespace wb::cli
