// The best.json reader (workbench/runtime/best.h: parse_best, what read_best and so
// `trainer --kernels` run on a file's text), wb.best/2 and wb.best/1. A file it accepts
// is written back with to_json and must read again with as many sections and entries.
#include <string>

#include "base/errors.h"
#include "tests/fuzz/fuzz_check.h"
#include "workbench/runtime/best.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace wb;
  const auto best =
      fuzz::unless_refused<UsageError>([&] { return parse_best(fuzz::as_text(data, size), "best.json"); });
  if (!best) return 0;  // not a best.json this wb reads: the CLI says why and exits 2
  const BestFile again = parse_best(to_json(*best).dump(), "best.json written back");
  fuzz::fuzz_require(again.sections.size() == best->sections.size(), "a best.json written back lost sections");
  for (std::size_t i = 0; i < best->sections.size(); ++i)
    fuzz::fuzz_require(again.sections[i].entries.size() == best->sections[i].entries.size(),
                       "a best.json written back lost entries");
  return 0;
}
