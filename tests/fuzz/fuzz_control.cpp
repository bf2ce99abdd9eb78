// The negative control of ci/fuzz.sh: planted bugs that a fuzz target must report,
// so that a build without the sanitizers or a script that loses exit codes cannot pass
// silently. ci/fuzz.sh runs it on each input of tests/fuzz/control/ and expects the
// report named there; any other input is read without a finding.
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "base/errors.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string text(wb::fuzz::as_text(data, size));
  if (text.rfind("overflow", 0) == 0) {  // reads one element past a heap array: ASan
    const auto values = std::make_unique<int[]>(4);
    volatile int past = values[4 + (size > 1000)];
    (void)past;
  } else if (text.rfind("shift", 0) == 0) {  // shifts an int by 40 bits: UBSan
    volatile int bits = 40 + int(size > 1000);
    volatile int shifted = 1 << bits;
    (void)shifted;
  } else if (text.rfind("exception", 0) == 0) {  // an exception a reader does not document
    throw std::logic_error("planted: not a wb::UsageError");
  } else if (text.rfind("usage", 0) == 0) {  // the documented error: caught, no finding
    try {
      throw wb::UsageError("planted: bad input");
    } catch (const wb::UsageError&) {
    }
  }
  return 0;
}
