#include "workbench/cli/list_verification.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "workbench/runtime/report.h"

namespace wb {

std::string Verification::text() const {
  switch (state) {
    case State::verified:
      return "verified on " + device + " " + date;
    case State::incorrect:
      return "INCORRECT on " + device + " " + date;
    case State::changed:
      return "changed since verified";
    case State::never:
      return "not yet run on a device";
  }
  return "?";
}

std::string Emulation::text() const {
  switch (state) {
    case State::passes:
      return "passes (" + date + ")";
    case State::fails:
      return "FAILS (" + date + "): " + reason;
    case State::skipped:
      return "skipped: " + reason;
    case State::not_emulated:
      return reason;
    case State::changed:
      return "changed since emulated";
    case State::never:
      return "not emulated yet";
  }
  return "?";
}

VerificationIndex VerificationIndex::scan(const std::string& results_dir) {
  VerificationIndex index;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(results_dir, ec)) return index;
  // (op, variant, hash a report recorded) -> the identity of the code it was measured on
  // (tools/rekey.py), for reports older than identities.
  std::map<std::tuple<std::string, int, std::string>, std::string> rekeyed;
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
    if (!j.is_object()) continue;
    const std::string schema = j.value("schema", "");
    if (schema == kRekeySchema) {
      try {
        for (const auto& r : j.at("rekeyed"))
          rekeyed[{r.at("op").get<std::string>(), r.at("variant").get<int>(), r.at("source_hash").get<std::string>()}] =
              r.at("identity").get<std::string>();
      } catch (const nlohmann::json::exception& e) {
        index.warnings_.push_back(path + ": malformed re-key file (" + e.what() + "), passed over");
      }
      continue;
    }
    if (schema != kReportSchema && schema != kReportSchemaV1) continue;  // best.json and others
    try {
      const Report r = report_from_json(j, path);
      for (const Record& rec : r.records) {
        if (rec.backend == Backend::cpu) continue;
        if (rec.status == Status::not_run) continue;  // never attempted: says nothing of the variant
        auto& where = rec.backend == Backend::cuda ? index.device_ : index.emulated_;
        where[{rec.op, rec.variant}].push_back(Seen{rec.source_hash, r.context.device.name,
                                                    r.context.created.substr(0, 10),
                                                    std::string(to_string(rec.status)), rec.reason});
      }
    } catch (const UsageError& e) {
      index.warnings_.push_back(std::string(e.what()) + ", passed over");
    }
  }
  for (auto* where : {&index.device_, &index.emulated_})
    for (auto& [key, seen] : *where)
      for (Seen& s : seen) {
        const auto it = rekeyed.find({std::get<0>(key), std::get<1>(key), s.hash});
        if (it != rekeyed.end()) s.hash = it->second;
      }
  return index;
}

Verification VerificationIndex::status(const Variant& v) const {
  Verification out;
  auto it = device_.find({v.op, v.id});
  if (it == device_.end()) return out;
  bool seen_ok = false;
  for (const Seen& s : it->second) seen_ok = seen_ok || s.status == "ok";
  if (!seen_ok) return out;  // only skips or failures: never shown correct anywhere
  out.state = Verification::State::changed;
  for (const Seen& s : it->second) {
    if (v.source_hash.empty() || s.hash != v.source_hash) continue;
    if (s.status == "incorrect") {  // revokes whatever else holds it correct
      if (out.state != Verification::State::incorrect || s.date > out.date) {
        out.state = Verification::State::incorrect;
        out.device = s.device;
        out.date = s.date;
      }
    } else if (s.status == "ok" && out.state != Verification::State::incorrect &&
               (out.state != Verification::State::verified || s.date > out.date)) {
      out.state = Verification::State::verified;
      out.device = s.device;
      out.date = s.date;
    }
  }
  return out;
}

Emulation VerificationIndex::emulation(const Variant& v) const {
  Emulation out;
  auto it = emulated_.find({v.op, v.id});
  if (it == emulated_.end()) return out;
  out.state = Emulation::State::changed;
  bool any = false, ok = false, failed = false, skipped = false, not_emulated = false;
  for (const Seen& s : it->second) {
    if (v.source_hash.empty() || s.hash != v.source_hash) continue;
    any = true;
    if (s.date > out.date) out.date = s.date;
    if (s.status == "incorrect" && !failed) {
      failed = true;
      out.reason = s.reason;
    }
    ok = ok || s.status == "ok";
    if (s.status == "skipped" && !skipped && !failed) {
      skipped = true;
      if (!ok) out.reason = s.reason;
    }
    if (s.status == "not_emulated") {
      not_emulated = true;
      out.reason = s.reason;
    }
  }
  if (!any) return out;
  if (failed) {
    out.state = Emulation::State::fails;
  } else if (ok) {
    out.state = Emulation::State::passes;
    out.reason.clear();
  } else if (not_emulated) {
    out.state = Emulation::State::not_emulated;
  } else {
    out.state = Emulation::State::skipped;
  }
  return out;
}

}  // namespace wb
