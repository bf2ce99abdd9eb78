#pragma once
// What the variant suites check first of a ladder (tests/variants/): its rungs.
#include <string>
#include <vector>

#include "contract/registry.h"

namespace wb::testing {

// The rungs of `op` on `backend`, "id name" each, in the registry's order: compared
// whole with the rungs a suite expects, a missing, extra, renumbered or renamed rung
// shows in one message.
inline std::vector<std::string> rungs(const std::string& op, Backend backend) {
  std::vector<std::string> out;
  for (const Variant* v : Registry::global().variants(op, backend))
    out.push_back(std::to_string(v->id) + " " + v->name);
  return out;
}

}  // namespace wb::testing
