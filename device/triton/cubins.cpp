#include "device/triton/cubins.h"

#include <mutex>

namespace wb::triton {
namespace {

std::map<std::string, CubinTable>& tables() {
  static std::map<std::string, CubinTable> t;
  return t;
}

std::mutex& tables_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

void register_cubins(const std::string& rung, const CubinTable& table) {
  std::lock_guard<std::mutex> lock(tables_mutex());
  tables()[rung] = table;
}

const CubinTable* cubins_of(const std::string& rung) {
  std::lock_guard<std::mutex> lock(tables_mutex());
  auto it = tables().find(rung);
  return it == tables().end() ? nullptr : &it->second;
}

std::string describe(const CubinTable& table) {
  std::string kernels;
  for (const std::string& k : table.kernels) kernels += (kernels.empty() ? "" : ", ") + k;
  std::string archs;
  for (const auto& [arch, n] : table.per_arch)
    // aot.py compiles 9.0 as sm_90a (its architecture-specific features), 8.0 as sm_80.
    archs += (archs.empty() ? "" : ", ") + std::string("sm_") + std::to_string(arch) + (arch == 90 ? "a " : " ") +
             std::to_string(n);
  return kernels + "; " + std::to_string(table.count) + " cubins (" + archs + "), " +
         std::to_string((table.bytes + 512) / 1024) + " KB";
}

}  // namespace wb::triton
