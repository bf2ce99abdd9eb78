// crossentropy_forward, CPU variant 2: the rows split over a tunable number of threads.
//
// Idea: the reference's loop (one log per row, of the probability at the row's
// target) with its B*T rows in static chunks over `threads` threads; the reference
// runs on the calling thread alone.
// Why it could beat variant 1: at large B*T the logs and the gathers of one
// probability per row (a cache miss each: the rows are Vp floats apart) overlap on
// several cores. At GPT-2's B*T (256 to 8192 rows, a few microseconds of work) waking
// threads can cost more than it saves: the sweep decides, and threads=1 is this
// variant run single-threaded.
// Accuracy: the same double log as the reference, so the same bits.
#include <cmath>

#include "kernels/cpu/threads.h"
#include "kernels/ops/crossentropy_forward.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

void crossentropy_threads(const CrossentropyForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t row = 0; row < rows; ++row)
    a.losses[row] = float(-std::log(double(a.probs[row * a.Vp + a.targets[row]])));
}

}  // namespace

Variant crossentropy_forward_cpu_2() {
  Variant v = Variant::of(&crossentropy_threads);
  v.op = "crossentropy_forward";
  v.backend = Backend::cpu;
  v.id = 2;
  v.name = "rows_threads";
  v.summary = "the reference's loop over rows in static chunks over a tunable number of threads (the reference's bits)";
  v.params = {cpu::threads_param()};
  return v;
}

}  // namespace wb::variants
