#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "base/errors.h"
#include "contract/registry.h"
#include "tests/support/brief_timing.h"
#include "tests/support/json_near.h"
#include "workbench/cli/list_verification.h"
#include "workbench/cli/pipeline_timing.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("wb_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

using testing::json_near;

Report sample_report() {
  auto ex = make_executor(Backend::cpu);
  const Registry& reg = Registry::global();
  const OpSpec& op = reg.op("matmul_forward");
  Session session(Registry::global(), op, parse_shape("B=2,T=4,C=8,OC=12"), 42, *ex);
  const TimingOptions timing = testing::brief_timing(2);
  EvalOptions o;
  o.timer = cli::timer_for(*ex, timing);
  Report r{make_context(*ex, timing, "wb test"), {}};
  for (const Variant* v : reg.variants(op.name, Backend::cpu))
    if (!is_torch_rung(*v)) r.records.push_back(session.evaluate(*v, {}, o));  // PyTorch's: test_torch_rungs.cpp
  Record skipped = record_for(op, reg.variant(op.name, Backend::cpu, 1), {}, session.problem().shape);
  skipped.reason = "requires something";
  r.records.push_back(skipped);
  return r;
}

// A report from "Test GPU" on 2026-01-02 of one CUDA record, of source hash "abc", that
// passed: what marks its variant verified.
Report passing_device_report() {
  Report r = sample_report();
  r.context.device.name = "Test GPU";
  r.context.created = "2026-01-02T03:04:05Z";
  Record rec = r.records[0];
  rec.backend = Backend::cuda;
  rec.source_hash = "abc";
  rec.status = Status::ok;
  r.records = {rec};
  return r;
}

// The CUDA variant a record of passing_device_report() measured.
Variant variant_of(const Record& r) {
  Variant v;
  v.op = r.op;
  v.backend = Backend::cuda;
  v.id = r.variant;
  v.source_hash = r.source_hash;
  return v;
}

TEST(Report, RoundTripsThroughJson) {
  Report r = sample_report();
  r.context.ceilings.absent["bf16_tflops"] = "no bf16 GEMM ceiling here";
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["context"]["ceilings"]["absent"]["bf16_tflops"], "no bf16 GEMM ceiling here");
  EXPECT_TRUE(j["context"]["device"].contains("cpu")) << "what the CPU can do";
  EXPECT_EQ(j["schema"], "wb.report/2");
  EXPECT_EQ(j["records"].size(), 4u);
  const Report back = report_from_json(j, "memory");
  EXPECT_TRUE(json_near(to_json(back), j)) << to_json(back).dump() << "\n" << j.dump();
  EXPECT_EQ(back.records[0].op, "matmul_forward");
  EXPECT_EQ(back.records[0].shape.OC, 12);
  EXPECT_EQ(back.records[0].dims, (std::vector<std::string>{"B", "T", "C", "OC"}));
  EXPECT_TRUE(back.records[0].timing);
  EXPECT_EQ(back.records[3].status, Status::skipped);
  EXPECT_FALSE(back.records[3].timing);
}

// A tensor check carries the row test's fields, and a report written before the row
// test (without them) reads back as a check that did not run it, and still passes.
TEST(Report, TheRowTestRoundTripsAndOlderReportsReadWithoutIt) {
  const nlohmann::json j = to_json(sample_report());
  const nlohmann::json& out = j["records"][0]["errors"][0];
  EXPECT_EQ(out["tensor"], "out");
  EXPECT_EQ(out["row_length"], 12) << "rows of OC";
  EXPECT_EQ(out["rows_checked"], 8) << "B * T rows";
  EXPECT_EQ(out["rows_failed"], 0);
  EXPECT_EQ(out["first_bad_row"], -1);
  const Report back = report_from_json(j, "memory");
  EXPECT_EQ(back.records[0].errors[0].rows.length, 12);
  EXPECT_EQ(back.records[0].errors[0].rows_checked, 8);
  nlohmann::json old = j;
  for (auto& record : old["records"])
    for (auto& check : record["errors"])
      for (const char* key : {"row_length", "row_parts", "row_bound", "row_floor", "rows_checked", "rows_failed",
                              "first_bad_row", "first_bad_row_rel_err", "row_tol_used", "max_row_rel_err"})
        check.erase(key);
  const Report older = report_from_json(old, "memory");
  EXPECT_EQ(older.records[0].errors[0].rows.length, 0);
  EXPECT_EQ(older.records[0].errors[0].rows_checked, 0);
  EXPECT_TRUE(older.records[0].errors[0].passed());
}

// The context names the BLAS the process loaded, and it is the build CMake linked: the
// OpenMP one when Debian's libopenblas-openmp-dev was there, whatever the system's
// libopenblas.so.0 alternative points at (the binaries' RUNPATH decides).
TEST(Report, TheContextNamesTheBlasThatWasLoaded) {
  const std::string blas = build_info().blas;
  EXPECT_NE(blas.find("OpenBLAS"), std::string::npos) << blas;
  const bool openmp = blas.find("threading: openmp") != std::string::npos;
  EXPECT_EQ(openmp, WB_OPENBLAS_OPENMP == 1) << blas;
  const nlohmann::json j = to_json(sample_report());
  EXPECT_EQ(j["context"]["build"]["blas"], blas);
  nlohmann::json old = j;
  old["context"]["build"].erase("blas");  // a report written before the field
  EXPECT_EQ(report_from_json(old, "memory").context.build.blas, "");
}

TEST(Report, WritesAndReadsFiles) {
  const fs::path dir = temp_dir("report");
  const Report r = sample_report();
  const std::string path = (dir / "nested" / "r.json").string();
  write_report(r, path);
  EXPECT_TRUE(json_near(to_json(read_report(path, Registry::global())), to_json(r)));
  // One record a line, each a whole JSON value, the context indented above them.
  std::ifstream in(path);
  std::string line;
  std::size_t record_lines = 0;
  bool context_indented = false;
  while (std::getline(in, line)) {
    context_indented = context_indented || line.rfind("    \"build\": {", 0) == 0;
    if (line.rfind("    {", 0) != 0) continue;
    if (line.back() == ',') line.pop_back();
    EXPECT_TRUE(json_near(nlohmann::json::parse(line.substr(4)), to_json(r)["records"][record_lines]));
    ++record_lines;
  }
  EXPECT_EQ(record_lines, r.records.size());
  EXPECT_TRUE(context_indented);
  fs::remove_all(dir);
}

std::string read_error(const std::string& path) {
  try {
    read_report(path, Registry::global());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Report, BadFilesAreUsageErrors) {
  const fs::path dir = temp_dir("bad_report");
  EXPECT_NE(read_error((dir / "missing.json").string()).find("cannot read"), std::string::npos);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  EXPECT_NE(read_error(write("broken.json", "{\"schema\": ")).find("malformed JSON"), std::string::npos);
  EXPECT_NE(read_error(write("other.json", R"({"schema": "wb.best/1"})")).find("has schema 'wb.best/1'"),
            std::string::npos);
  nlohmann::json j = to_json(sample_report());
  j["records"][0].erase("status");
  EXPECT_NE(read_error(write("no_status.json", j.dump())).find("records[0] has no 'status'"), std::string::npos);
  j = to_json(sample_report());
  j["records"][1]["backend"] = "tpu";
  EXPECT_NE(read_error(write("tpu.json", j.dump())).find("unknown backend 'tpu'"), std::string::npos);
  fs::remove_all(dir);
}

// One incorrect record of the same source revokes "verified"; emulation is reported
// apart and never counts as verified.
TEST(Verification, IncorrectRevokesAndEmulationStaysApart) {
  const fs::path dir = temp_dir("verification2");
  Report gpu = passing_device_report();
  const Record ok = gpu.records[0];
  Record bad = ok;
  bad.status = Status::incorrect;
  bad.reason = "out: 3 mismatches";
  write_report(gpu, (dir / "gpu" / "a.json").string());
  Report emu = gpu;
  emu.context.device.name = "emulated sm_90";
  Record emulated = ok;
  emulated.backend = Backend::emu;
  Record not_emulated = emulated;
  not_emulated.variant = 77;
  not_emulated.status = Status::not_emulated;
  not_emulated.reason = "not emulated: needs cuDNN";
  emu.records = {emulated, not_emulated};
  write_report(emu, (dir / "emu" / "check.json").string());

  const Variant v = variant_of(ok);
  {
    const VerificationIndex index = VerificationIndex::scan(dir.string());
    EXPECT_EQ(index.status(v).text(), "verified on Test GPU 2026-01-02");
    EXPECT_EQ(index.emulation(v).text(), "passes (2026-01-02)");
    Variant other = v;
    other.id = 77;
    EXPECT_EQ(index.status(other).text(), "not yet run on a device") << "emulation is not verification";
    EXPECT_EQ(index.emulation(other).text(), "not emulated: needs cuDNN");
    Variant changed = v;
    changed.source_hash = "def";
    EXPECT_EQ(index.emulation(changed).text(), "changed since emulated");
  }
  gpu.records = {bad};
  write_report(gpu, (dir / "gpu" / "b.json").string());
  {
    const VerificationIndex index = VerificationIndex::scan(dir.string());
    EXPECT_EQ(index.status(v).text(), "INCORRECT on Test GPU 2026-01-02");
  }
  fs::remove_all(dir);
}

TEST(Verification, FollowsTheSourceHash) {
  const fs::path dir = temp_dir("verification");
  const Report r = passing_device_report();
  write_report(r, (dir / "dev" / "sweep.json").string());
  std::ofstream(dir / "junk.json") << "not json";

  const VerificationIndex index = VerificationIndex::scan(dir.string());
  EXPECT_EQ(index.warnings().size(), 1u);
  Variant v = variant_of(r.records[0]);
  EXPECT_EQ(index.status(v).text(), "verified on Test GPU 2026-01-02");
  v.source_hash = "def";
  EXPECT_EQ(index.status(v).text(), "changed since verified");
  v.id = 77;
  EXPECT_EQ(index.status(v).text(), "not yet run on a device");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace wb
