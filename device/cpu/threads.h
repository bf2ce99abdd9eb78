#pragma once
// The thread count of a CPU variant as a launch parameter, the CPU's counterpart of
// block_size: a variant declares threads_param() and opens every parallel region with
// num_threads(threads(launch)), so that a sweep can see where more threads stop paying
// (small rows, memory-bound loops on a shared socket). threaded() starts the description
// of such a rung.
//
// Legal values: 1, 2, 4, ... below the OpenMP maximum of this process, then that
// maximum itself, which is the default (what a plain `omp parallel` would use). The
// maximum is omp_get_max_threads() when the registry is built: the cores, or
// OMP_NUM_THREADS. A machine with fewer threads has fewer legal values: a best.json
// entry naming threads=8 runs only where eight are available (the trainer runs the
// default elsewhere, with a warning).
#include <omp.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "contract/variant.h"

namespace wb::cpu {

inline TuningParam threads_param() {
  const int most = std::max(1, omp_get_max_threads());
  std::vector<int> values;
  for (int n = 1; n < most; n *= 2) values.push_back(n);
  values.push_back(most);
  return TuningParam{"threads", std::move(values), most};
}

inline int threads(const Launch& l) { return l.get("threads"); }

// The usual start of a CPU rung's description: run, its one-line summary, and the
// thread count as its launch parameter; the rung adds what else it has (workspace,
// requirements).
template <class Args>
Variant threaded(void (*run)(const Args&, const Launch&), std::string summary) {
  Variant v = Variant::of(run);
  v.summary = std::move(summary);
  v.params = {threads_param()};
  return v;
}

}  // namespace wb::cpu
