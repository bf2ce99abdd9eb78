// wb table's rows (workbench/cli/table_rows.h) on report fixtures: each record's kind,
// the fastest correct, timed configuration per kind, why a kind has none, the refusals.
#include <gtest/gtest.h>

#include "base/errors.h"
#include "contract/registry.h"
#include "tests/support/report_fixtures.h"
#include "tests/support/test_helpers.h"
#include "workbench/cli/table_rows.h"

namespace wb::cli {
namespace {

// A gelu_forward record of one kind: its file and name as the registry gives them.
Record of_kind(int variant, const std::string& name, const std::string& source, double median_us,
               Status status = Status::ok) {
  Record r = testing::timed_record("gelu_forward", variant, median_us * 1e-6, 0);
  r.variant_name = name;
  r.source = source;
  if (status != Status::ok) {
    r.status = status;
    r.reason = "fixture reason";
    r.timing.reset();
  }
  return r;
}

const Record kEager = of_kind(80, "torch_eager", "variants/gelu_forward/torch.py", 40);
const Record kCompiled = of_kind(81, "torch_compile", "variants/gelu_forward/torch.py", 12);
const Record kNaive = of_kind(1, "naive", "variants/gelu_forward/01_naive.cu", 30);
const Record kVector = of_kind(2, "vec4", "variants/gelu_forward/02_vec4.cu", 10);
const Record kTriton = of_kind(3, "triton_sigmoid", "variants/gelu_forward/03_triton_sigmoid.py", 11);
const Record kLibrary = of_kind(4, "cublaslt", "variants/gelu_forward/04_cublaslt.cu", 50);

TEST(Table, EachRecordHasItsKind) {
  EXPECT_EQ(rung_kind(kEager), RungKind::torch_eager);
  EXPECT_EQ(rung_kind(kCompiled), RungKind::torch_compile);
  EXPECT_EQ(rung_kind(kNaive), RungKind::hand_written);
  EXPECT_EQ(rung_kind(kTriton), RungKind::triton);
  EXPECT_EQ(rung_kind(kLibrary), RungKind::library);
  EXPECT_EQ(rung_kind(of_kind(3, "openblas", "variants/matmul_forward/cpu_03_openblas.cpp", 1)), RungKind::library);
}

TEST(Table, TheFastestCorrectOfEachKindAndWhyAKindHasNone) {
  const Record wrong_fast = of_kind(5, "fast_but_wrong", "variants/gelu_forward/05_x.cu", 0, Status::incorrect);
  Record no_bias = kNaive;  // the pass without the optional tensors: not the op's whole work
  no_bias.omitted = {"bias"};
  no_bias.timing->median_s = 1e-9;
  const Record skipped_library = of_kind(4, "cublaslt", "variants/gelu_forward/04_cublaslt.cu", 0, Status::skipped);
  const std::vector<std::pair<std::string, Report>> reports{
      {"a.json", testing::fixture_report({kEager, kCompiled, kNaive, kVector, wrong_fast, no_bias}, "Fixture GPU")},
      {"b.json", testing::fixture_report({kTriton, skipped_library}, "Fixture GPU")}};
  const std::vector<TableRow> rows = table_rows(reports);
  ASSERT_EQ(rows.size(), 1u);
  const TableRow& row = rows[0];
  EXPECT_EQ(row.op, "gelu_forward");
  EXPECT_EQ(row.cells[size_t(RungKind::torch_eager)].best->variant, 80);
  EXPECT_EQ(row.cells[size_t(RungKind::torch_compile)].best->variant, 81);
  EXPECT_EQ(row.cells[size_t(RungKind::hand_written)].best->variant, 2);  // not the incorrect one, nor no_bias
  EXPECT_EQ(row.cells[size_t(RungKind::hand_written)].records, 3u);
  EXPECT_EQ(row.cells[size_t(RungKind::triton)].best->variant, 3);
  EXPECT_EQ(row.cells[size_t(RungKind::library)].best, nullptr);
  EXPECT_EQ(row.cells[size_t(RungKind::library)].why_none, "skipped: fixture reason");

  const std::string md = table_markdown(rows, reports, "wb table a.json b.json");
  EXPECT_TRUE(testing::contains(md,
                                "| gelu_forward | B=8 T=1024 C=768 | 40.00 us cuda/80 | 12.00 us cuda/81 | "
                                "10.00 us cuda/2 | 11.00 us cuda/3 | skipped: fixture reason | best hand-written, "
                                "4.00x eager |"))
      << md;
}

TEST(Table, RefusesSeveralDevicesAndReportsWithoutTimes) {
  const std::vector<std::pair<std::string, Report>> two{{"a.json", testing::fixture_report({kEager}, "Fixture GPU")},
                                                        {"b.json", testing::fixture_report({kVector}, "Other GPU")}};
  EXPECT_TRUE(testing::contains(testing::usage_error([&] { table_rows(two); }), "one table per device"));
  const std::vector<std::pair<std::string, Report>> untimed{
      {"a.json", testing::fixture_report({of_kind(1, "naive", "variants/gelu_forward/01_naive.cu", 0, Status::skipped)},
                                         "Fixture GPU")}};
  EXPECT_TRUE(testing::contains(testing::usage_error([&] { table_rows(untimed); }), "no correct, timed record"));
}

}  // namespace
}  // namespace wb::cli
