// softmax_forward, CPU variant 3: variant 2's three passes, vectorised.
//
// Idea: the same passes over each row (max; e = exp(x - max) into probs, summed;
// scale by 1 / sum), every loop under `#pragma omp simd` with restrict-qualified rows:
// the max as a SIMD max-reduction, exp from the inline polynomial of
// device/cpu/simd_math.h instead of libm's expf call, the sum in float lanes over
// blocks of 256 values, each block's sum added to a double. The row is
// variants/softmax/softmax_row.h's softmax_row, which variant 4 compiles for x86-64-v3.
// Why it should beat variant 2: expf was a call per value and kept two of the three
// passes scalar; now all three run four (SSE) lanes at a time.
// Accuracy: fast_exp is within 2e-7 relative; a block's float sum adds at most 64
// terms per lane (under 4e-6 relative in the worst case, about 1e-7 typically), the
// blocks add in double. The op allows 1e-8 + 1e-4 |ref|.
// Limits: three trips through each row (200 KB at GPT-2's vocabulary: L2, not L1);
// the baseline build's SSE is four lanes.
#include "contract/ops/softmax_forward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/softmax/softmax_row.h"

namespace wb::variants {

Variant softmax_forward_cpu_3() {
  return cpu::threaded(&cpu::softmax_rows<cpu::softmax_row>,
                       "variant 2's passes as SIMD loops: max reduction, inline polynomial exp, float block sums");
}

}  // namespace wb::variants
