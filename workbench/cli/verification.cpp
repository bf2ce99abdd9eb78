#include "workbench/cli/verification.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/errors.h"
#include "workbench/runtime/report.h"

namespace wb {

std::string Verification::text() const {
  switch (state) {
    case State::verified:
      return "verified on " + device + " " + date;
    case State::changed:
      return "changed since verified";
    case State::never:
      return "not yet run on a device";
  }
  return "?";
}

VerificationIndex VerificationIndex::scan(const std::string& results_dir) {
  VerificationIndex index;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(results_dir, ec)) return index;
  for (fs::recursive_directory_iterator it(results_dir, ec), end; it != end && !ec; it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".json") continue;
    const std::string path = it->path().string();
    nlohmann::json j;
    try {
      std::ifstream in(path);
      in >> j;
    } catch (const nlohmann::json::exception& e) {
      index.warnings_.push_back(path + ": malformed JSON, passed over");
      continue;
    }
    if (!j.is_object() || (j.value("schema", "") != kReportSchema && j.value("schema", "") != kReportSchemaV1)) continue;  // best.json and others
    try {
      const Report r = report_from_json(j, path);
      for (const Record& rec : r.records) {
        if (rec.status != Status::ok) continue;
        index.correct_[{rec.op, rec.backend, rec.variant}].push_back(
            Seen{rec.source_hash, r.context.device.name, r.context.created.substr(0, 10)});
      }
    } catch (const UsageError& e) {
      index.warnings_.push_back(std::string(e.what()) + ", passed over");
    }
  }
  return index;
}

Verification VerificationIndex::status(const Variant& v) const {
  Verification out;
  auto it = correct_.find({v.op, v.backend, v.id});
  if (it == correct_.end()) return out;
  out.state = Verification::State::changed;
  for (const Seen& s : it->second) {
    if (v.source_hash.empty() || s.hash != v.source_hash) continue;
    if (out.state != Verification::State::verified || s.date > out.date) {
      out.state = Verification::State::verified;
      out.device = s.device;
      out.date = s.date;
    }
  }
  return out;
}

}  // namespace wb
