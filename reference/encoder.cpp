// CPU reference of encoder_forward and encoder_backward.
#include "reference/reference.h"

namespace wb::reference {

void encoder_forward(const EncoderForwardArgs& a) {
  const int64_t C = a.C;
#pragma omp parallel for
  for (int64_t bt = 0; bt < int64_t(a.B) * a.T; ++bt) {
    const int64_t t = bt % a.T;
    const float* wte_row = a.wte + int64_t(a.inp[bt]) * C;
    const float* wpe_row = a.wpe + t * C;
    float* out_row = a.out + bt * C;
    for (int64_t c = 0; c < C; ++c) out_row[c] = wte_row[c] + wpe_row[c];
  }
}

void encoder_backward(const EncoderBackwardArgs& a) {
  const int64_t C = a.C;
  // Parallel over channels: rows of dwte that several tokens share never race.
#pragma omp parallel for
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t bt = 0; bt < int64_t(a.B) * a.T; ++bt) {
      const int64_t t = bt % a.T;
      const float d = a.dout[bt * C + c];
      a.dwte[int64_t(a.inp[bt]) * C + c] += d;
      a.dwpe[t * C + c] += d;
    }
  }
}

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> encoder() {
  return {Variant::reference("encoder_forward", &reference::encoder_forward),
          Variant::reference("encoder_backward", &reference::encoder_backward)};
}

}  // namespace wb::references
