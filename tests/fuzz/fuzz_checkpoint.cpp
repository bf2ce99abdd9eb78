// The checkpoint reader (trainer/model.h: read_checkpoint from a stream, what
// `trainer --model FILE` runs on the file): llm.c's model header, the configuration's
// checks and the size check before anything is allocated. A checkpoint it accepts
// holds exactly the parameters its configuration counts.
#include <sstream>
#include <string>

#include "base/errors.h"
#include "tests/fuzz/fuzz_check.h"
#include "trainer/model.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace wb;
  std::istringstream in(std::string(fuzz::as_text(data, size)), std::ios::binary);
  const auto ck = fuzz::unless_refused<UsageError>([&] { return trainer::read_checkpoint(in, "model.bin"); });
  if (!ck) return 0;  // missing, truncated or foreign: the trainer says why and exits 2
  fuzz::fuzz_require(int64_t(ck->params.size()) == trainer::num_params(ck->config),
                     "a checkpoint read holds another parameter count than its header describes");
  return 0;
}
