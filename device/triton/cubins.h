#pragma once
// What each Triton rung's launcher carries (tools/triton/aot.py's cubin table), for
// `wb list`: the generated cuda variant of a rung registers its table here when the
// program starts (tools/triton/cxx.py). Free of CUDA, so that wb list compiles
// everywhere; empty in a build without the rungs' cubins.
#include <cstddef>
#include <map>
#include <set>
#include <string>

namespace wb::triton {

struct CubinTable {
  std::set<std::string> kernels;  // the entry functions' names
  std::map<int, int> per_arch;    // 80 -> cubins compiled for sm_80
  std::size_t bytes = 0;          // all of them
  int count = 0;
};

void register_cubins(const std::string& rung, const CubinTable& table);
// The table of the rung at `rung` (its path in the repository); nullptr when none.
const CubinTable* cubins_of(const std::string& rung);
// "gelu_sigmoid; 32 cubins (sm_80 16, sm_90a 16), 599 KB".
std::string describe(const CubinTable& table);

}  // namespace wb::triton
