#pragma once
// What the variant suites check first of a ladder (tests/variants/): its rungs, and of a
// rung that takes no launch parameter, that it takes none.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contract/registry.h"

namespace wb::testing {

// The rungs of `op` on `backend` written for wb, "id name" each, in the registry's
// order: compared whole with the rungs a suite expects, a missing, extra, renumbered or
// renamed rung shows in one message. The PyTorch rungs every ladder has (80 and 81,
// docs/torch.md) are left out: tests/workbench/test_torch_rungs.cpp checks them.
inline std::vector<std::string> rungs(const std::string& op, Backend backend) {
  std::vector<std::string> out;
  for (const Variant* v : Registry::global().variants(op, backend))
    if (!is_torch_rung(*v)) out.push_back(std::to_string(v->id) + " " + v->name);
  return out;
}

// The variants of `op` on `backend` written for wb: the registry's, less the PyTorch
// rungs every ladder has (docs/torch.md), which the ladder suites leave to
// tests/workbench/test_torch_rungs.cpp.
inline std::vector<const Variant*> wb_rungs(const Registry& reg, const std::string& op, Backend backend) {
  std::vector<const Variant*> out;
  for (const Variant* v : reg.variants(op, backend))
    if (!is_torch_rung(*v)) out.push_back(v);
  return out;
}

// Rung `id` of op's CPU ladder, checked to be one that takes no launch parameter, not
// even the thread count the other rungs take (it threads itself, as OpenBLAS does), and
// computes in fp32.
inline const Variant& parameterless_cpu_rung(const std::string& op, int id) {
  const Variant& v = Registry::global().variant(op, Backend::cpu, id);
  EXPECT_EQ(v.numeric, NumericClass::fp32) << v.key();
  EXPECT_TRUE(v.params.empty()) << v.key();
  return v;
}

}  // namespace wb::testing
