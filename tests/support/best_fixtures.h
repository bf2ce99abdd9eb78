#pragma once
// best.json fixtures for the suites that build a kernel plan (tests/workbench/
// test_kernel_plan.cpp, tests/trainer/test_trainer.cpp).
#include <string>
#include <utility>
#include <vector>

#include "contract/registry.h"
#include "contract/shape.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/executor.h"

namespace wb::testing {

// A best.json with one section: this device's, or `backend`'s (the emulator runs a
// CUDA device's section).
inline BestFile best_for(const Executor& ex, std::vector<BestEntry> entries) {
  BestSection s;
  s.backend = ex.backend() == Backend::emu ? Backend::cuda : ex.backend();
  s.device_name = ex.device().name;
  s.device_slug = ex.device().slug;
  s.architecture = ex.device().architecture;
  s.isa = ex.device().isa;
  s.compute_capability = ex.device().compute_capability;
  s.entries = std::move(entries);
  BestFile b;
  b.sections.push_back(std::move(s));
  return b;
}

inline BestEntry entry(const std::string& op, const Shape& shape, int variant) {
  BestEntry e;
  e.op = op;
  e.dims = Registry::global().op(op).dims;
  e.shape = shape;
  e.variant = variant;
  return e;
}

}  // namespace wb::testing
