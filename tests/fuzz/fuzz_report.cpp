// The report reader (workbench/runtime/report.h: parse_report, what read_report runs on
// a file's text): JSON, the wb.report/1 and /2 structure, and the registry's check of
// the ops, variants and launch parameters it names. A report it accepts is written
// back with to_json and must read again.
#include <string>

#include "base/errors.h"
#include "tests/fuzz/fuzz_check.h"
#include "workbench/runtime/report.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace wb;
  const auto report =
      fuzz::unless_refused<UsageError>([&] { return parse_report(fuzz::as_text(data, size), "fuzz.json"); });
  if (!report) return 0;  // not a report this wb reads: the CLI says why and exits 2
  const Report again = parse_report(to_json(*report).dump(), "fuzz.json written back");
  fuzz::fuzz_require(again.records.size() == report->records.size(), "a report written back lost records");
  return 0;
}
