// Which files hold rungs of another kind than wb's own C++ and CUDA: on its own, so that
// the readers (the fuzz targets of tests/fuzz/, which link no registry) can tell a
// report's PyTorch records by their source as wb best does.
#include <string_view>

#include "contract/registry.h"

namespace wb {

bool is_torch_rung_file(std::string_view source) {
  const std::string_view tail = "/torch.py";
  return source.size() > tail.size() && source.substr(source.size() - tail.size()) == tail;
}

}  // namespace wb
