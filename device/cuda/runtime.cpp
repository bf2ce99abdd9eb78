#include "device/cuda/runtime.h"

#include <string>

#include "base/errors.h"

namespace wb::cuda {

void throw_error(const char* library, int code, const char* name, const char* message, const char* call,
                 const char* file, int line) {
  std::string where = file;
  const std::string root = std::string(WB_SOURCE_DIR) + "/";
  if (where.rfind(root, 0) == 0) where = where.substr(root.size());
  throw BackendError(std::string(call) + " failed at " + where + ":" + std::to_string(line) + ": " + library +
                     " error " + std::to_string(code) + " " + name + ": " + message);
}

}  // namespace wb::cuda
