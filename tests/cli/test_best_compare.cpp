// wb best and wb compare on report fixtures written here: the choice rules, the
// verdicts, and the exit codes of the commands.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "base/errors.h"
#include "tests/support/json_near.h"
#include "tests/support/not_integers.h"
#include "tests/support/report_fixtures.h"
#include "tests/support/test_helpers.h"
#include "workbench/cli/compare_reports.h"
#include "workbench/runtime/best.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

Record rec(const std::string& op, int variant, double median_ms, double stddev_ms, Status status = Status::ok,
           NumericClass numeric = NumericClass::fp32, int block_size = 0) {
  Record r = testing::timed_record(op, variant, median_ms * 1e-3, stddev_ms * 1e-3);
  r.numeric = numeric;
  if (block_size) r.params.set("block_size", block_size);
  if (status != Status::ok) {
    r.status = status;
    r.reason = "fixture";
    r.timing.reset();
    r.deterministic.reset();
  }
  return r;
}

Report report(std::vector<Record> records, const std::string& device = "Fixture GPU") {
  return testing::fixture_report(std::move(records), device);
}

BestSection best_of(std::vector<Record> records, NumericClass precision = NumericClass::fp32) {
  return choose_best({{"fixture.json", report(std::move(records))}}, precision);
}

TEST(Best, PicksTheFastestCorrectVariant) {
  const BestSection b = best_of({rec("layernorm_forward", 1, 10.0, 0.1), rec("layernorm_forward", 2, 5.0, 0.1),
                              rec("layernorm_forward", 3, 1.0, 0.0, Status::incorrect),
                              rec("layernorm_forward", 4, 0.0, 0.0, Status::skipped)});
  ASSERT_EQ(b.entries.size(), 1u);
  EXPECT_EQ(b.entries[0].variant, 2);
  EXPECT_DOUBLE_EQ(b.entries[0].median_s, 5e-3);
  EXPECT_EQ(b.entries[0].note, "fastest correct");
}

TEST(Best, PicksTheFastestBlockSizeOfAVariant) {
  const BestSection b = best_of({rec("layernorm_forward", 3, 4.0, 0.01, Status::ok, NumericClass::fp32, 128),
                              rec("layernorm_forward", 3, 3.0, 0.01, Status::ok, NumericClass::fp32, 256),
                              rec("layernorm_forward", 3, 3.5, 0.01, Status::ok, NumericClass::fp32, 512)});
  ASSERT_EQ(b.entries.size(), 1u);
  EXPECT_EQ(b.entries[0].params.describe(), "block_size=256");
}

TEST(Best, KeepsTheSimplerVariantWithinNoise) {
  // 2% faster, but the difference (0.2 ms) is within the noise (0.15 + 0.15 ms).
  BestSection b = best_of({rec("layernorm_forward", 1, 10.0, 0.15), rec("layernorm_forward", 2, 9.8, 0.15)});
  EXPECT_EQ(b.entries[0].variant, 1);
  EXPECT_NE(b.entries[0].note.find("kept over cuda/2"), std::string::npos) << b.entries[0].note;
  // Beyond the noise but under 1%.
  b = best_of({rec("layernorm_forward", 1, 10.0, 0.0), rec("layernorm_forward", 2, 9.95, 0.0)});
  EXPECT_EQ(b.entries[0].variant, 1);
  // Beyond both: the faster one wins.
  b = best_of({rec("layernorm_forward", 1, 10.0, 0.01), rec("layernorm_forward", 2, 9.8, 0.01)});
  EXPECT_EQ(b.entries[0].variant, 2);
}

TEST(Best, PrecisionLimitsTheNumericClasses) {
  const std::vector<Record> records{rec("matmul_forward", 5, 10.0, 0.1),
                                    rec("matmul_forward", 6, 3.0, 0.1, Status::ok, NumericClass::tf32),
                                    rec("matmul_forward", 7, 2.0, 0.1, Status::ok, NumericClass::bf16)};
  EXPECT_EQ(best_of(records, NumericClass::fp32).entries[0].variant, 5);
  EXPECT_EQ(best_of(records, NumericClass::tf32).entries[0].variant, 6);
  EXPECT_EQ(best_of(records, NumericClass::bf16).entries[0].variant, 7);
}

TEST(Best, KeysEntriesByOpAndShape) {
  Record other = rec("layernorm_forward", 1, 1.0, 0.0);
  other.shape = parse_shape("B=4,T=1024,C=768");
  const BestSection b = best_of({rec("layernorm_forward", 1, 2.0, 0.0), other, rec("gelu_forward", 1, 1.0, 0.0)});
  ASSERT_EQ(b.entries.size(), 3u);
  ASSERT_NE(b.find("layernorm_forward", parse_shape("B=4,T=1024,C=768")), nullptr);
  EXPECT_DOUBLE_EQ(b.find("layernorm_forward", parse_shape("B=4,T=1024,C=768"))->median_s, 1e-3);
  EXPECT_EQ(b.find("layernorm_forward", parse_shape("B=2,T=1024,C=768")), nullptr);
}

TEST(Best, RefusesToMixDevices) {
  EXPECT_THROW(choose_best({{"a.json", report({rec("gelu_forward", 1, 1, 0)}, "GPU A")},
                            {"b.json", report({rec("gelu_forward", 1, 1, 0)}, "GPU B")}},
                           NumericClass::fp32),
               UsageError);
}

// One CPU at two instruction-set levels (one report capped by WB_CPU_ISA) is two
// devices for the choices: its slugs differ, and so do its sections.
TEST(Best, RefusesToMixOneCpusInstructionSetLevels) {
  Report avx512 = report({rec("gelu_forward", 1, 1, 0)}, "CPU A");
  Report avx2 = avx512;
  for (Report* r : {&avx512, &avx2}) r->context.device.backend = Backend::cpu;
  avx512.context.device.slug = "cpu-a-avx512bf16", avx512.context.device.isa = "avx512bf16";
  avx2.context.device.slug = "cpu-a-avx2", avx2.context.device.isa = "avx2";
  const std::string why = testing::usage_error([&] {
    choose_best({{"a.json", avx512}, {"b.json", avx2}}, NumericClass::fp32);
  });
  EXPECT_NE(why.find("cpu/cpu-a-avx512bf16"), std::string::npos) << why;
  EXPECT_NE(why.find("cpu/cpu-a-avx2"), std::string::npos) << why;
  EXPECT_EQ(choose_best({{"b.json", avx2}}, NumericClass::fp32).isa, "avx2");
}

TEST(Best, DeterministicOnlyPassesOverRecordsThatDrifted) {
  Record fast = rec("layernorm_backward", 2, 1.0, 0.0);
  fast.deterministic = false;
  const std::vector<Record> records{rec("layernorm_backward", 1, 5.0, 0.0), fast};
  EXPECT_EQ(best_of(records).entries[0].variant, 2);
  EXPECT_FALSE(best_of(records).entries[0].deterministic);
  const BestSection d = choose_best({{"fixture.json", report(records)}}, NumericClass::fp32, true);
  EXPECT_EQ(d.entries[0].variant, 1);
  EXPECT_TRUE(d.deterministic_only);
}

BestFile file_of(std::vector<BestSection> sections) {
  BestFile f;
  for (auto& s : sections) f.merge(std::move(s));
  return f;
}

BestSection section(Backend b, const std::string& name, const std::string& architecture, const std::string& cc = "") {
  BestSection s = best_of({rec("gelu_forward", 1, 1.0, 0.0)});
  s.backend = b;
  s.device_name = name;
  s.device_slug = slugify(name);
  s.architecture = architecture;
  s.compute_capability = cc;
  s.created = "2026-11-21T00:00:00Z";
  return s;
}

TEST(Best, RoundTripsThroughJson) {
  BestFile b = file_of({section(Backend::cpu, "CPU A", "x86_64"), section(Backend::cuda, "GPU A", "sm_90", "9.0")});
  b.sections[0].isa = "avx2";
  const nlohmann::json j = to_json(b);
  EXPECT_EQ(best_from_json(j, "memory").sections[0].isa, "avx2");
  EXPECT_EQ(j["schema"], "wb.best/2");
  EXPECT_EQ(j["sections"].size(), 2u);
  EXPECT_TRUE(testing::json_near(to_json(best_from_json(j, "memory")), j));
  EXPECT_THROW(best_from_json(nlohmann::json{{"schema", "wb.report/1"}}, "x"), UsageError);
  nlohmann::json twice = j;
  twice["sections"][1] = twice["sections"][0];
  EXPECT_NE(testing::usage_error([&] { best_from_json(twice, "x"); }).find("two sections for cpu/cpu-a"), std::string::npos);
  nlohmann::json negative = j;
  negative["sections"][0]["ops"]["gelu_forward"][0]["median_us"] = -3.0;
  EXPECT_NE(testing::usage_error([&] { best_from_json(negative, "x"); }).find("gelu_forward[0].median_us is -3.0"),
            std::string::npos);
}

TEST(Best, MergeReplacesOnlyTheSectionOfTheSameDevice) {
  BestFile f = file_of({section(Backend::cpu, "CPU A", "x86_64"), section(Backend::cuda, "GPU A", "sm_90", "9.0")});
  BestSection newer = section(Backend::cpu, "CPU A", "x86_64");
  newer.created = "2026-11-22T00:00:00Z";
  f.merge(newer);
  ASSERT_EQ(f.sections.size(), 2u);
  EXPECT_EQ(f.find(Backend::cpu, "cpu-a")->created, "2026-11-22T00:00:00Z");
  f.merge(section(Backend::cpu, "CPU B", "x86_64"));
  EXPECT_EQ(f.sections.size(), 3u);
}

// An old one-device file reads as a file of one section.
TEST(Best, ReadsWbBestVersion1) {
  const nlohmann::json v1 = nlohmann::json::parse(R"({
    "schema": "wb.best/1", "created": "2026-11-21T00:00:00Z", "backend": "cpu",
    "device": {"name": "CPU A", "slug": "cpu-a"}, "precision": "fp32", "reports": ["r.json"],
    "ops": {"gelu_forward": [{"shape": {"B": 2, "T": 8, "C": 32}, "variant": 2, "variant_name": "v2",
      "numeric_class": "fp32", "params": {}, "median_us": 3.5, "stddev_us": 0.1, "report": "r.json",
      "source_hash": "abc", "note": "fastest correct"}]}})");
  const BestFile b = best_from_json(v1, "old.json");
  EXPECT_TRUE(b.from_v1);
  ASSERT_EQ(b.sections.size(), 1u);
  EXPECT_EQ(b.sections[0].key(), "cpu/cpu-a");
  ASSERT_EQ(b.sections[0].entries.size(), 1u);
  EXPECT_EQ(b.sections[0].entries[0].variant, 2);
  EXPECT_TRUE(b.sections[0].entries[0].deterministic);
}

// A number is read as an integer only when it is one in the field's range: a float beyond
// int's, such as the 2.2e81 tests/fuzz/fuzz_best.cpp found, once reached nlohmann's
// get<int>() (undefined behaviour), and one beyond it as an integer wrapped.
TEST(Best, ReadsIntegersOnlyWhenTheyAreIntegersInRange) {
  const nlohmann::json good = to_json(file_of({section(Backend::cpu, "CPU A", "x86_64")}));
  const std::string entry = "/sections/0/ops/gelu_forward/0/";
  auto with = [&](const std::string& field, const nlohmann::json& value) {
    nlohmann::json j = good;
    j[nlohmann::json::json_pointer(entry + field)] = value;
    return j.dump();
  };
  for (const testing::NotAnInteger& bad :
       testing::not_integers({{"params/threads", "params.threads", 0, testing::kIntMax},
                              {"variant", "variant", 1, testing::kIntMax},
                              {"shape/C", "shape.C", 1, testing::kInt64Max}})) {
    const std::string e = testing::usage_error([&] { parse_best(with(bad.pointer, bad.value), "best.json"); });
    EXPECT_EQ(e, "best.json: sections[0].ops.gelu_forward[0]." + bad.message)
        << bad.pointer << " = " << bad.value.dump();
  }
  // What is an integer in range is read, written as a float or not.
  const BestFile b = parse_best(with("params/threads", 4.0), "best.json");
  EXPECT_EQ(b.sections[0].entries[0].params.describe(), "threads=4");
  EXPECT_EQ(parse_best(with("params/threads", 0), "best.json").sections[0].entries[0].params.describe(), "threads=0");
  EXPECT_EQ(parse_best(with("variant", 2147483647), "best.json").sections[0].entries[0].variant, 2147483647);
}

DeviceInfo device(Backend b, const std::string& name, const std::string& architecture, const std::string& cc = "") {
  DeviceInfo d;
  d.backend = b;
  d.name = name;
  d.slug = slugify(name);
  d.architecture = architecture;
  d.compute_capability = cc;
  return d;
}

TEST(Best, TakesThisDevicesSectionElseTheClosest) {
  const BestFile f = file_of({section(Backend::cpu, "CPU A", "aarch64"), section(Backend::cpu, "CPU B", "x86_64"),
                              section(Backend::cuda, "GPU A", "sm_80", "8.0"),
                              section(Backend::cuda, "GPU B", "sm_90", "9.0")});
  SectionChoice c = choose_section(f, device(Backend::cpu, "CPU A", "aarch64"));
  EXPECT_TRUE(c.exact);
  EXPECT_EQ(c.section->key(), "cpu/cpu-a");
  c = choose_section(f, device(Backend::cpu, "CPU C", "x86_64"));  // another CPU model: the same architecture
  EXPECT_FALSE(c.exact);
  EXPECT_EQ(c.section->key(), "cpu/cpu-b");
  EXPECT_NE(c.why.find("closest"), std::string::npos) << c.why;
  EXPECT_EQ(choose_section(f, device(Backend::cpu, "CPU D", "riscv64")).section, nullptr);
  c = choose_section(f, device(Backend::cuda, "GPU C", "sm_90", "9.0"));  // the same compute capability
  EXPECT_EQ(c.section->key(), "cuda/gpu-b");
  c = choose_section(f, device(Backend::cuda, "GPU D", "sm_86", "8.6"));  // else the same major
  EXPECT_EQ(c.section->key(), "cuda/gpu-a");
  EXPECT_NE(c.why.find("the same major"), std::string::npos) << c.why;
  c = choose_section(f, device(Backend::cuda, "GPU E", "sm_75", "7.5"));
  EXPECT_EQ(c.section, nullptr);
  EXPECT_NE(c.why.find("no section for this device (cuda/gpu-e)"), std::string::npos) << c.why;
  c = choose_section(f, device(Backend::emu, "emulated sm_90", "sm_90", "9.0"));  // emulates a CUDA section
  EXPECT_EQ(c.section->key(), "cuda/gpu-b");
  EXPECT_EQ(choose_section(file_of({section(Backend::cpu, "CPU A", "x86_64")}),
                           device(Backend::cuda, "GPU C", "sm_90", "9.0"))
                .section,
            nullptr);
}

Verdict verdict_of(const Record& base, const Record& now, double max_slowdown = 0.05) {
  const CompareResult r = compare_reports(report({base}), report({now}), max_slowdown);
  EXPECT_EQ(r.rows.size(), 1u);
  return r.rows.at(0).verdict;
}

TEST(Compare, Verdicts) {
  const std::string op = "gelu_forward";
  EXPECT_EQ(verdict_of(rec(op, 1, 10.0, 0.1), rec(op, 1, 8.0, 0.1)), Verdict::faster);
  EXPECT_EQ(verdict_of(rec(op, 1, 10.0, 0.3), rec(op, 1, 10.5, 0.3)), Verdict::same);  // within noise
  EXPECT_EQ(verdict_of(rec(op, 1, 10.0, 0.1), rec(op, 1, 10.3, 0.1)), Verdict::slower);
  EXPECT_EQ(verdict_of(rec(op, 1, 10.0, 0.1), rec(op, 1, 10.0, 0, Status::incorrect)), Verdict::now_incorrect);
  EXPECT_EQ(verdict_of(rec(op, 1, 10.0, 0.1), rec(op, 1, 10.0, 0, Status::skipped)), Verdict::gone);
  EXPECT_EQ(verdict_of(rec(op, 1, 10.0, 0, Status::incorrect), rec(op, 1, 10.0, 0.1)), Verdict::added);
  const CompareResult r = compare_reports(report({rec(op, 1, 10, 0.1)}), report({rec(op, 2, 10, 0.1)}), 0.05);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].verdict, Verdict::gone);
  EXPECT_EQ(r.rows[1].verdict, Verdict::added);
  EXPECT_EQ(r.regressions(), 0);
}

TEST(Compare, RegressionsNeedTheThresholdAndTheNoise) {
  const std::string op = "gelu_forward";
  auto regressions = [&](const Record& base, const Record& now) {
    return compare_reports(report({base}), report({now}), 0.05).regressions();
  };
  EXPECT_EQ(regressions(rec(op, 1, 10.0, 0.01), rec(op, 1, 10.3, 0.01)), 0);  // slower, within 5%
  EXPECT_EQ(regressions(rec(op, 1, 10.0, 0.01), rec(op, 1, 11.0, 0.01)), 1);  // 10% slower
  EXPECT_EQ(regressions(rec(op, 1, 10.0, 0.6), rec(op, 1, 11.0, 0.6)), 0);    // 10% but within the noise
  EXPECT_EQ(regressions(rec(op, 1, 10.0, 0.01), rec(op, 1, 5.0, 0.01)), 0);   // faster never fails
  EXPECT_EQ(regressions(rec(op, 1, 10.0, 0.1), rec(op, 1, 0, 0, Status::incorrect)), 1);
}

TEST(Compare, MatchesByLaunchParameters) {
  const std::string op = "gelu_forward";
  const CompareResult r = compare_reports(report({rec(op, 1, 10, 0.1, Status::ok, NumericClass::fp32, 128)}),
                                          report({rec(op, 1, 20, 0.1, Status::ok, NumericClass::fp32, 256)}), 0.05);
  EXPECT_EQ(r.rows.size(), 2u);  // block size 128 gone, 256 new: not a regression
  EXPECT_EQ(r.regressions(), 0);
}

TEST(Compare, RefusesDifferentDevices) {
  EXPECT_THROW(compare_reports(report({}, "GPU A"), report({}, "GPU B"), 0.05), UsageError);
}

// The commands, on fixture files.
using testing::Result;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

class Commands : public testing::ReportFolder {};

TEST_F(Commands, BestWritesBestJson) {
  const std::string a = write("a.json", report({rec("gelu_forward", 1, 10, 0.1), rec("gelu_forward", 2, 5, 0.1)}));
  const std::string out = path("best.json");
  const Result r = wb("best " + a + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  const BestFile b = read_best(out);
  ASSERT_EQ(b.sections.size(), 1u);
  ASSERT_EQ(b.sections[0].entries.size(), 1u);
  EXPECT_EQ(b.sections[0].entries[0].variant, 2);
  EXPECT_EQ(b.sections[0].entries[0].report, a);
  EXPECT_EQ(b.sections[0].device_name, "Fixture GPU");
}

// Each device's reports update its own section; the others are kept, --replace drops them.
TEST_F(Commands, BestMergesSectionsPerDeviceAndReplaces) {
  const std::string a = write("a.json", report({rec("gelu_forward", 2, 10, 0.1)}, "GPU A"));
  const std::string b = write("b.json", report({rec("gelu_forward", 2, 10, 0.1)}, "GPU B"));
  const std::string a2 = write("a2.json", report({rec("gelu_forward", 1, 10, 0.1)}, "GPU A"));
  const std::string out = path("best.json");
  Result r = wb("best " + a + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  r = wb("best " + b + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("1 of other devices kept"), std::string::npos) << r.output;
  r = wb("best " + a2 + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  BestFile f = read_best(out);
  ASSERT_EQ(f.sections.size(), 2u);
  EXPECT_EQ(f.find(Backend::cuda, "gpu-a")->entries[0].variant, 1);  // a2 replaced a
  EXPECT_EQ(f.find(Backend::cuda, "gpu-b")->entries[0].variant, 2);
  r = wb("best --show " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("2 section(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gpu-b"), std::string::npos) << r.output;
  r = wb("best " + a + " " + b + " --replace --out " + out);  // two devices at once: two sections
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(read_best(out).sections.size(), 2u);
  r = wb("best " + b + " --replace --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  f = read_best(out);
  ASSERT_EQ(f.sections.size(), 1u);
  EXPECT_EQ(f.sections[0].device_slug, "gpu-b");
}

// Within a device's section, new entries replace those of the same op and shape only: a
// bf16 op's choices join the fp32 ones instead of erasing them.
TEST_F(Commands, BestMergesEntriesPerOpAndShapeWithinASection) {
  const std::string fp32 = write("fp32.json", report({rec("gelu_forward", 2, 10, 0.1)}, "GPU A"));
  const std::string bf16 = write("bf16.json", report({rec("residual_forward_bf16", 1, 10, 0.1)}, "GPU A"));
  const std::string out = path("best.json");
  ASSERT_EQ(wb("best " + fp32 + " --out " + out).code, 0);
  const Result r = wb("best " + bf16 + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("with 1 entries of other ops or shapes kept from before"), std::string::npos) << r.output;
  const BestFile f = read_best(out);
  ASSERT_EQ(f.sections.size(), 1u);
  const BestSection& s = f.sections[0];
  ASSERT_EQ(s.entries.size(), 2u);
  EXPECT_EQ(s.entries[0].op, "gelu_forward");
  EXPECT_EQ(s.entries[1].op, "residual_forward_bf16");
  EXPECT_EQ(s.reports.size(), 2u) << "the reports of both entries";
  // --replace starts the section afresh.
  ASSERT_EQ(wb("best " + bf16 + " --replace --out " + out).code, 0);
  EXPECT_EQ(read_best(out).sections[0].entries.size(), 1u);
}

TEST_F(Commands, BestRefusesBadFilesAndLeavesTheOutputAlone) {
  const std::string a = write("a.json", report({rec("gelu_forward", 1, 10, 0.1)}, "GPU A"));
  Result r = wb("best " + path("missing.json") + " --out " + path("x.json"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("cannot read"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("x.json")));
  r = wb("best " + a + " --precision fp64 --out " + path("x.json"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("unknown numeric class"), std::string::npos) << r.output;
  r = wb("best " + a + " --out " + a);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("is one of the reports"), std::string::npos) << r.output;
  const std::string broken = write_text("broken.json", "{ half a best.json");
  r = wb("best " + a + " --out " + broken);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("malformed JSON"), std::string::npos) << r.output;
  std::ifstream in(broken);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "{ half a best.json");
  EXPECT_EQ(wb("best " + a).code, 2);              // no --out
  EXPECT_EQ(wb("best --show " + broken).code, 2);  // not a best.json
  // A variant id far beyond int, as tests/fuzz/fuzz_best.cpp found (its input is in
  // tests/fuzz/corpus/best/variant_2.2e81.json), and a launch parameter the same.
  const std::string entry = R"({"median_us":1.0,"note":"","numeric_class":"fp32","report":"r.json",
    "shape":{"N":7363328},"source_hash":"","stddev_us":0.0,"variant_name":"simd_float",)";
  auto best_json = [&](const std::string& name, const std::string& fields) {
    return write_text(name, R"({"schema":"wb.best/2","sections":[{"backend":"cpu","created":"2026-11-23T14:30:35Z",
      "device":{"name":"CPU A","slug":"cpu-a"},"precision":"fp32","reports":[],"ops":{"adamw":[)" +
                                entry + fields + "}]}}]}");
  };
  const std::string variant = best_json("variant.json", R"("params":{"threads":1},"variant":2.2e81)");
  EXPECT_EXIT_WITH(wb("best --show " + variant), 2,
                   "sections[0].ops.adamw[0].variant is 2.2e+81, not an integer in [1, 2147483647]");
  r = wb("best " + a + " --out " + variant);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("variant is 2.2e+81"), std::string::npos) << r.output;
  const std::string threads = best_json("threads.json", R"("params":{"threads":2.2e81},"variant":2)");
  EXPECT_EXIT_WITH(wb("best --show " + threads), 2,
                   "sections[0].ops.adamw[0].params.threads is 2.2e+81, not an integer in [0, 2147483647]");
}

TEST_F(Commands, CompareExitCodes) {
  const std::string base = write("base.json", report({rec("gelu_forward", 1, 10, 0.01)}));
  const std::string same = write("same.json", report({rec("gelu_forward", 1, 10.001, 0.01)}));
  const std::string slower = write("slower.json", report({rec("gelu_forward", 1, 12, 0.01)}));
  const std::string faster = write("faster.json", report({rec("gelu_forward", 1, 5, 0.01)}));
  const std::string broken = write("broken.json", report({rec("gelu_forward", 1, 0, 0, Status::incorrect)}));
  const std::string other = write("other.json", report({rec("gelu_forward", 1, 10, 0.01)}, "Other GPU"));
  EXPECT_EQ(wb("compare " + base + " " + same).code, 0);
  EXPECT_EQ(wb("compare " + base + " " + faster).code, 0);
  Result r = wb("compare " + base + " " + slower);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("SLOWER"), std::string::npos);
  EXPECT_NE(r.output.find("FAIL"), std::string::npos);
  EXPECT_EQ(wb("compare " + base + " " + slower + " --max-slowdown 25%").code, 0);
  EXPECT_EQ(wb("compare " + base + " " + broken).code, 1);
  r = wb("compare " + base + " " + other);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("different devices"), std::string::npos);
  r = wb("compare " + base + " " + write_text("bad.json", "{ not json"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("malformed JSON"), std::string::npos);
  r = wb("compare " + base + " " + path("nowhere.json"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("cannot read"), std::string::npos);
  EXPECT_EQ(wb("compare " + base + " " + same + " --max-slowdown lots").code, 2);
  r = wb("compare " + base + " " + slower + " --format markdown");
  EXPECT_NE(r.output.find("| **SLOWER** |"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace wb
