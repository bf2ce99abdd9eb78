// Reading a report file: its text through parse_report (the format, report.cpp), then
// the names it holds against this build's registry. Kept apart from the format so that
// the format can be read, and fuzzed (tests/fuzz/), without linking every variant.
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "contract/registry.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

// A report given to a command names ops, variants and launch parameters this wb knows:
// a misspelt or foreign one would otherwise be matched against nothing and pass
// silently. A CUDA variant is known by its emulated twin in a build without nvcc.
void check_known(const Report& r, const std::string& origin, const Registry& reg) {
  for (std::size_t i = 0; i < r.records.size(); ++i) {
    const Record& rec = r.records[i];
    const std::string where = origin + ": records[" + std::to_string(i) + "].";
    try {
      reg.op(rec.op);
    } catch (const UsageError& e) {
      throw UsageError(where + "op: " + e.what());
    }
    const Variant* v = reg.find(rec.op, rec.backend, rec.variant);
    if (!v && rec.backend == Backend::cuda) v = reg.find(rec.op, Backend::emu, rec.variant);
    try {
      if (!v) v = &reg.variant(rec.op, rec.backend, rec.variant);  // throws, naming the ids there are
      v->check_params(rec.params);
    } catch (const UsageError& e) {
      throw UsageError(where + (v ? "params: " : "variant: ") + e.what());
    }
  }
}

}  // namespace

Report read_report(const std::string& path, const Registry& registry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the report " + path + ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError("cannot read the report " + path + ": read failed");
  Report r = parse_report(text.str(), path);
  check_known(r, path, registry);
  return r;
}

}  // namespace wb
