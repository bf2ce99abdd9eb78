// fused_classifier, CPU variant 4: variant 3's row compiled for AVX2 and FMA.
//
// Idea: the same three passes over each row (max; e = exp(x - max) in place, summed in
// float lanes per block of 256 into a double; scale by dloss / sum and subtract dloss
// at the target), in a function compiled for x86-64-v3 (device/cpu/target.h): eight
// float lanes instead of the baseline build's four, the polynomial's multiply-adds
// fused. Threads take whole rows and call that function on each.
// Why it should beat variant 3: at GPT-2's vocabulary the exp pass is most of the time
// and is bound by arithmetic; twice the lanes and half the instructions per
// polynomial step go straight to it.
// Accuracy: as variant 3: fast_exp within 2e-7 relative, block sums of at most 32
// terms per lane, blocks added in double.
// Limits: skipped on CPUs without AVX2 and FMA, and in builds for other
// architectures; still three trips through each row.
#include "contract/ops/fused_classifier.h"
#include "contract/variant.h"
#include "device/cpu/target.h"
#include "device/cpu/threads.h"
#include "variants/softmax/softmax_row.h"

namespace wb::variants {
namespace {

// variant 3's row, inlined into a function compiled for x86-64-v3.
WB_TARGET_X86_64_V3 float classifier_row_v3(float* x, int64_t V, int64_t Vp, int64_t target, float dloss) {
  return cpu::classifier_row(x, V, Vp, target, dloss);
}

}  // namespace

Variant fused_classifier_cpu_4() {
  return cpu::threaded_x86_64_v3(&cpu::classifier_rows<classifier_row_v3>,
                                 "variant 3's row compiled for x86-64-v3: eight lanes, fused multiply-adds");
}

}  // namespace wb::variants
