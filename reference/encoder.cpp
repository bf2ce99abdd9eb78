// CPU reference of encoder_forward and encoder_backward.
#include <map>
#include <vector>

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

// The bf16 port: the fp32 sum of the widened rows, rounded once to nearest even.
void encoder_forward_bf16(const EncoderForwardBf16Args& a) {
  const int64_t C = a.C;
#pragma omp parallel for
  for (int64_t bt = 0; bt < int64_t(a.B) * a.T; ++bt) {
    const bf16* wte_row = a.wte + int64_t(a.inp[bt]) * C;
    const bf16* wpe_row = a.wpe + (bt % a.T) * C;
    bf16* out_row = a.out + bt * C;
    for (int64_t c = 0; c < C; ++c) out_row[c] = to_bf16(to_float(wte_row[c]) + to_float(wpe_row[c]));
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

// The bf16 port: every element's contributions summed in double (over the positions of
// its token, or over b), then the element rounded once from old + sum.
void encoder_backward_bf16(const EncoderBackwardBf16Args& a) {
  const int64_t C = a.C, rows = int64_t(a.B) * a.T;
#pragma omp parallel for
  for (int64_t c = 0; c < C; ++c) {
    std::map<int32_t, double> per_token;  // ordered: the same sums on every run
    std::vector<double> per_position(a.T, 0.0);
    for (int64_t bt = 0; bt < rows; ++bt) {
      const double d = to_float(a.dout[bt * C + c]);
      per_token[a.inp[bt]] += d;
      per_position[bt % a.T] += d;
    }
    for (const auto& [token, sum] : per_token) {
      bf16& w = a.dwte[int64_t(token) * C + c];
      w = to_bf16(to_float(w) + sum);
    }
    for (int64_t t = 0; t < a.T; ++t) {
      bf16& p = a.dwpe[t * C + c];
      p = to_bf16(to_float(p) + per_position[t]);
    }
  }
}

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> encoder() {
  return {WB_REFERENCE(encoder_forward), WB_REFERENCE(encoder_backward), WB_REFERENCE_PORT(encoder_forward_bf16),
          WB_REFERENCE_PORT(encoder_backward_bf16)};
}

}  // namespace wb::references
