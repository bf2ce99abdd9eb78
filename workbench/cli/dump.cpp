// wb dump: one op's random inputs and reference outputs as raw little-endian files
// plus a manifest, for checks outside wb (tests/python/test_reference.py reads them).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "kernels/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/runtime/problem.h"

namespace wb::cli {
namespace {

void write_raw(const std::filesystem::path& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), std::streamsize(bytes));
  if (!out) throw UsageError("cannot write " + path.string());
}

}  // namespace

int dump(const DumpOptions& o) {
  const OpSpec& op = registry().op(o.op);
  const Shape shape = parse_shape(o.shape);
  const Problem problem(op, shape, o.seed);
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
    if (t.checked()) {
      entry["expected"] = t.name + ".expected.bin";
      write_raw(fs::path(o.out) / entry["expected"].get<std::string>(), problem.expected.buffers[i].data(),
                t.bytes(shape));
    }
    manifest["tensors"].push_back(entry);
  }
  std::ofstream out(fs::path(o.out) / "manifest.json");
  out << manifest.dump(2) << "\n";
  if (!out) throw UsageError("cannot write " + (fs::path(o.out) / "manifest.json").string());
  std::cout << "wrote " << op.name << " at " << op.describe_shape(shape) << " to " << o.out << "\n";
  return kOk;
}

}  // namespace wb::cli
