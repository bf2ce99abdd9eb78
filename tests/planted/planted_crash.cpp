// A test-only CPU variant of residual_forward that kills its process with SIGSEGV, as
// a wild pointer would: without --isolate it takes the run down; with --isolate it
// costs its own configurations only.
#include <csignal>
#include <vector>

#include "contract/ops/residual_forward.h"
#include "contract/variant.h"

namespace {

void segfault(const wb::ResidualForwardArgs&, const wb::Launch&) { std::raise(SIGSEGV); }

}  // namespace

std::vector<wb::Variant> planted_cpu_variants() {
  wb::Variant v = wb::Variant::of(&segfault);
  v.op = "residual_forward";
  v.backend = wb::Backend::cpu;
  v.id = 90;
  v.name = "planted_segfault";
  v.summary = "test only: dies by SIGSEGV";
  return {v};
}
