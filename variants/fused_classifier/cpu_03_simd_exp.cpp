// fused_classifier, CPU variant 3: variant 2's three passes, vectorised.
//
// Idea: the same passes over each row (max; e = exp(x - max) in place, summed; scale
// by dloss / sum and subtract dloss at the target), with every loop under
// `#pragma omp simd`: the max as a SIMD max-reduction, exp from the inline polynomial
// of device/cpu/simd_math.h instead of libm's expf call, and the sum in float lanes
// over blocks of 256 logits, each block's sum added to a double. The row is
// variants/softmax/softmax_row.h's classifier_row, which variant 4 compiles for x86-64-v3.
// Why it should beat variant 2: expf was a call per logit and kept two of the three
// passes scalar; now all three run four (SSE) lanes at a time.
// Accuracy: fast_exp is within 2e-7 relative; a block's float sum adds at most 64
// terms per lane (relative error under 4e-6 in the worst case, about 1e-7 typically)
// and the blocks add in double. The loss (tolerance 1e-5 + 1e-5 |ref|) and the
// probabilities (1e-4 relative) keep a wide margin.
// Limits: three trips through each row (200 KB at GPT-2's vocabulary: L2, not L1);
// the baseline build's SSE is four lanes.
#include "contract/ops/fused_classifier.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/softmax/softmax_row.h"

namespace wb::variants {

Variant fused_classifier_cpu_3() {
  return cpu::threaded(&cpu::classifier_rows<cpu::classifier_row>,
                       "variant 2's passes as SIMD loops: max reduction, inline polynomial exp, float block sums");
}

}  // namespace wb::variants
