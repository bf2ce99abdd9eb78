// wb dump: one op's random inputs and reference outputs as raw little-endian files
// plus a manifest, for checks outside wb (tests/python/test_reference.py reads them).
// Every file goes through the atomic writer; the manifest is written last, so that a
// folder with a manifest holds every file it names.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/errors.h"
#include "base/files.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/options.h"
#include "workbench/runtime/problem.h"

namespace wb::cli {
namespace {

void write_raw(const std::filesystem::path& path, const void* data, std::size_t bytes) {
  write_file_atomically(path, std::string_view(static_cast<const char*>(data), bytes));
}

struct DumpOptions {
  std::string op;
  std::string shape = "gpt2-124m";
  uint64_t seed = 1;
  std::string out;
};

int dump(const DumpOptions& o) {
  const OpSpec& op = registry().op(o.op);
  const Shape shape = parse_shape(o.shape);
  const Problem problem(registry(), op, shape, o.seed);
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) throw UsageError("cannot create the folder " + o.out + ": " + ec.message());

  nlohmann::json manifest{{"schema", "wb.dump/1"}, {"op", op.name}, {"seed", o.seed}};
  for (const auto& d : Shape::dim_names()) manifest["shape"][d] = shape.get(d);
  manifest["scalars"] = nlohmann::json::object();
  for (const auto& s : op.scalars) manifest["scalars"][s.name] = s.value(shape);
  manifest["tensors"] = nlohmann::json::array();
  for (std::size_t i = 0; i < op.tensors.size(); ++i) {
    const TensorSpec& t = op.tensors[i];
    nlohmann::json entry{
        {"name", t.name}, {"role", to_string(t.role)}, {"dtype", to_string(t.dtype)}, {"dims", t.dims(shape)}};
    if (t.role != Role::output) {
      entry["initial"] = t.name + ".initial.bin";
      write_raw(fs::path(o.out) / entry["initial"].get<std::string>(), problem.initial.buffers[i].data(),
                t.bytes(shape));
    }
    if (t.checked()) {  // the reference's, in its storage (fp32 for an op on bf16 storage)
      const TensorSpec& truth = problem.truth->tensors[i];
      entry["expected"] = t.name + ".expected.bin";
      entry["expected_dtype"] = to_string(truth.dtype);
      write_raw(fs::path(o.out) / entry["expected"].get<std::string>(), problem.expected.buffers[i].data(),
                truth.bytes(shape));
    }
    manifest["tensors"].push_back(entry);
  }
  write_file_atomically(fs::path(o.out) / "manifest.json", manifest.dump(2) + "\n");
  std::cout << "wrote " << op.name << " at " << op.describe_shape(shape) << " to " << o.out << "\n";
  return kOk;
}

void add_options(CLI::App& cmd, DumpOptions& o) {
  cmd.add_option("op", o.op, "the op")->required();
  add_shape_option(cmd, o.shape);
  add_seed_option(cmd, o.seed);
  cmd.add_option("--out", o.out, "folder to write")->required();
}

}  // namespace

Command add_dump_command(CLI::App& app) {
  return new_command(
      app, "dump",
      "write one op's random inputs and reference outputs as raw files and a manifest (for external checks)",
      add_options, dump);
}

}  // namespace wb::cli
