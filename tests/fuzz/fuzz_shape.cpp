// The shape parser (contract/shape.h: parse_shape), as `wb run --shape TEXT` calls it.
// A parsed shape has every dim positive, and written back as "B=..,T=..,..." with every
// dim it parses to itself.
#include <string>

#include "base/errors.h"
#include "contract/shape.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace wb;
  const auto shape = fuzz::unless_refused<UsageError>([&] { return parse_shape(fuzz::as_text(data, size)); });
  if (!shape) return 0;  // malformed shape: the CLI says why and exits 2
  std::string all_dims;
  for (const auto& dim : Shape::dim_names()) {
    fuzz::fuzz_require(shape->get(dim) > 0, "a parsed shape has a dim that is not positive");
    all_dims += (all_dims.empty() ? "" : ",") + dim + "=" + std::to_string(shape->get(dim));
  }
  fuzz::fuzz_require(parse_shape(all_dims) == *shape, "a shape written with every dim does not parse to itself");
  return 0;
}
