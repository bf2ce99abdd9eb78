// Registry-wide invariants: what every op and every variant must satisfy, whatever the
// size of its ladder. Adding a variant never needs a change here; breaking the
// contract of docs/architecture.md ("Op", "Variant", "Registry") fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "base/errors.h"
#include "contract/registry.h"
#include "workbench/cli/list_verification.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

bool snake_case(const std::string& s) { return std::regex_match(s, std::regex("[a-z][a-z0-9_]*")); }

TEST(RegistryInvariants, EveryOpHasItsCpuReference) {
  const Registry& reg = Registry::global();
  for (const OpSpec* op : reg.ops()) {
    const Variant* ref = reg.find(op->name, Backend::cpu, 1);
    ASSERT_NE(ref, nullptr) << op->name << " has no CPU reference";
    EXPECT_EQ(ref->name, "reference") << op->name;
    EXPECT_EQ(ref->source.rfind("reference/", 0), 0u) << op->name << ": " << ref->source;
    EXPECT_EQ(ref->source_hash.size(), 64u) << op->name;
  }
}

TEST(RegistryInvariants, IdsAreUniquePerOpAndBackendAndMatchTheirFiles) {
  const Registry& reg = Registry::global();
  for (const OpSpec* op : reg.ops()) {
    for (Backend b : {Backend::cpu, Backend::cuda}) {
      std::set<int> ids;
      for (const Variant* v : reg.variants(op->name, b)) {
        EXPECT_TRUE(ids.insert(v->id).second) << v->key() << " registered twice";
        EXPECT_GE(v->id, 1) << v->key();
        if (v->id == 1 && b == Backend::cpu) continue;  // the reference lives in reference/
        if (is_torch_rung(*v)) {                        // one file, variants/<op>/torch.py, is both PyTorch rungs
          EXPECT_TRUE(v->id == kTorchEagerId || v->id == kTorchCompileId) << v->key();
          EXPECT_EQ(v->source, "variants/" + op->name + "/torch.py") << v->key();
          continue;
        }
        const VariantFile file = parse_variant_file(v->source);
        EXPECT_EQ(file.backend, b) << v->key() << ": " << v->source;
        EXPECT_EQ(file.id, v->id) << v->key() << ": " << v->source;
        EXPECT_EQ(v->source.find("variants/" + op->name + "/"), 0u) << v->key() << ": " << v->source;
      }
      // A ladder starts at its naive port: id 1 exists whenever the backend has any.
      if (!ids.empty()) {
        EXPECT_TRUE(ids.count(1)) << op->name << " on " << to_string(b) << " has no variant 1";
      }
    }
  }
}

TEST(RegistryInvariants, EveryVariantDescribesItself) {
  const Registry& reg = Registry::global();
  for (const OpSpec* op : reg.ops()) {
    for (const Variant* v : reg.variants(op->name)) {
      EXPECT_TRUE(snake_case(v->name)) << v->key() << ": name '" << v->name << "'";
      EXPECT_FALSE(v->summary.empty()) << v->key();
      EXPECT_EQ(v->summary.find('\n'), std::string::npos) << v->key() << ": the summary is one line";
      EXPECT_EQ(v->source_hash.size(), 64u) << v->key();
      EXPECT_TRUE(v->run) << v->key();
      EXPECT_EQ(v->args_type, op->args_type()) << v->key();
      for (std::size_t i = 0; i < v->params.size(); ++i) {
        const TuningParam& p = v->params[i];
        EXPECT_TRUE(snake_case(p.name)) << v->key() << ": parameter '" << p.name << "'";
        EXPECT_FALSE(p.values.empty()) << v->key() << " " << p.name;
        EXPECT_EQ(std::set<int>(p.values.begin(), p.values.end()).size(), p.values.size())
            << v->key() << " " << p.name << " lists a value twice";
        if (p.name == "block_size") {
          EXPECT_EQ(i, 0u) << v->key() << ": block_size comes first";
          for (int bs : p.values) EXPECT_TRUE(bs >= 1 && bs <= 1024 && bs % 32 == 0) << v->key() << " block " << bs;
        }
      }
      for (const Requirement& r : v->requirements) EXPECT_FALSE(r.text.empty()) << v->key();
    }
  }
}

// Every legal configuration either can run each check shape or says why not; the
// CPU check (ctest check_all_cpu) and the emulated check then run what can run.
TEST(RegistryInvariants, EveryConfigurationRunsOrSaysWhyNot) {
  const Registry& reg = Registry::global();
  for (const OpSpec* op : reg.ops()) {
    for (const Shape& shape : check_shapes()) {
      try {
        op->check_shape(shape);
      } catch (const UsageError&) {
        continue;
      }
      for (const Variant* v : reg.variants(op->name)) {
        for (const ParamValues& p : v->all_params()) {
          std::optional<std::string> why;
          ASSERT_NO_THROW(why = v->skip_reason(shape, p)) << v->key() << " " << p.describe();
          if (why) {
            EXPECT_FALSE(why->empty()) << v->key() << " " << p.describe() << ": a skip needs a reason";
          } else {
            EXPECT_NO_THROW((void)v->workspace_bytes(shape, p)) << v->key() << " " << p.describe();
          }
        }
      }
    }
  }
}

// An id is never reused: every committed report under results/ names each
// (op, backend, id) with the name it has now (a retired id stays unused).
TEST(RegistryInvariants, CommittedReportsAgreeOnVariantNames) {
  namespace fs = std::filesystem;
  const Registry& reg = Registry::global();
  const fs::path results = fs::path(WB_SOURCE_DIR) / "results";
  int records = 0;
  for (const auto& entry : fs::recursive_directory_iterator(results)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(std::ifstream(entry.path()));
    } catch (const nlohmann::json::exception&) {
      ADD_FAILURE() << entry.path() << " is not JSON";
      continue;
    }
    if (!j.is_object() || (j.value("schema", "") != kReportSchema && j.value("schema", "") != kReportSchemaV1))
      continue;
    for (const Record& r : report_from_json(j, entry.path().string()).records) {
      ++records;
      const Variant* v = reg.find(r.op, r.backend, r.variant);
      if (!v) continue;  // this build lacks it (no nvcc, no cuDNN) or it was retired
      EXPECT_EQ(v->name, r.variant_name) << entry.path() << ": " << r.op << " " << to_string(r.backend) << "/"
                                         << r.variant << " was '" << r.variant_name << "': ids are never reused";
    }
  }
  EXPECT_GT(records, 0) << "no committed report under " << results;
}

// Every entry of every section of the committed results/best.json names an op, a
// variant and launch parameters the registry has (a CUDA section's variants are checked
// against the emulator's build of every .cu file, which a build without nvcc has too).
TEST(CommittedBestJson, NamesOnlyKnownVariantsAndParameters) {
  const Registry& reg = Registry::global();
  const BestFile best = read_best((std::filesystem::path(WB_SOURCE_DIR) / "results" / "best.json").string());
  ASSERT_FALSE(best.sections.empty());
  for (const BestSection& s : best.sections) {
    const Backend b = s.backend == Backend::cuda ? Backend::emu : s.backend;
    EXPECT_FALSE(s.architecture.empty()) << s.key() << ": the closest-section rule needs its architecture";
    for (const BestEntry& e : s.entries) {
      ASSERT_NE(reg.find_op(e.op), nullptr) << s.key() << ": " << e.op;
      const Variant* v = reg.find(e.op, b, e.variant);
      ASSERT_NE(v, nullptr) << s.key() << ": " << e.op << " " << e.variant;
      EXPECT_EQ(v->name, e.variant_name) << s.key() << ": " << e.op << " " << e.variant;
      EXPECT_NO_THROW(v->check_params(e.params)) << s.key() << ": " << e.op << " " << e.variant;
    }
  }
}

}  // namespace
}  // namespace wb

namespace wb {
namespace {

// The committed emulation report (results/emu/, `wb check --all --backend emu --json
// results/emu/check.json`) covers every CUDA variant at the source it has now, and
// holds none incorrect: change a kernel, and this fails until the report is made again.
TEST(EmulationReport, IsCurrentForEveryCudaVariant) {
  const Registry& reg = Registry::global();
  const VerificationIndex index = VerificationIndex::scan((std::filesystem::path(WB_SOURCE_DIR) / "results").string());
  int variants = 0;
  for (const OpSpec* op : reg.ops()) {
    for (const Variant* v : reg.variants(op->name, Backend::emu)) {
      ++variants;
      const Emulation e = index.emulation(*v);
      EXPECT_TRUE(e.state == Emulation::State::passes || e.state == Emulation::State::not_emulated)
          << v->key() << ": " << e.text()
          << " -- re-run `wb check --all --backend emu --json results/emu/check.json` and commit it";
    }
  }
  EXPECT_GT(variants, 0);
}

}  // namespace
}  // namespace wb
