#pragma once
// A CPU variant that a test makes of a plain function, to plant a behaviour (a wrong
// result, a throw, an unmet requirement) that the harness meets as it would meet a
// registered rung.
#include <string>
#include <utility>

#include "contract/variant.h"

namespace wb::testing {

// Variant 99 of `op`, "test-only": no registered rung has that id.
template <class Args>
Variant test_variant(void (*fn)(const Args&, const Launch&), std::string op, std::string name) {
  Variant v = Variant::of(fn);
  v.op = std::move(op);
  v.backend = Backend::cpu;
  v.id = 99;
  v.name = std::move(name);
  v.summary = "test-only";
  return v;
}

}  // namespace wb::testing
