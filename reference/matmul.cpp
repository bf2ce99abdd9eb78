// CPU reference of matmul_forward, matmul_backward and matmul_backward_bias.
#include "reference/reference.h"

namespace wb::reference {

void matmul_forward(const MatmulForwardArgs& a) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = a.inp + r * C;
    for (int64_t o = 0; o < OC; ++o) {
      const float* w = a.weight + o * C;
      double acc = a.bias ? a.bias[o] : 0.0;
      for (int64_t c = 0; c < C; ++c) acc += double(x[c]) * w[c];
      a.out[r * OC + o] = float(acc);
    }
  }
}

void matmul_backward(const MatmulBackwardArgs& a) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;
  // dinp = dout @ weight (overwritten)
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < C; ++c) {
      double acc = 0;
      for (int64_t o = 0; o < OC; ++o) acc += double(a.dout[r * OC + o]) * a.weight[o * C + c];
      a.dinp[r * C + c] = float(acc);
    }
  }
  // dweight += dout^T @ inp
#pragma omp parallel for
  for (int64_t o = 0; o < OC; ++o) {
    for (int64_t c = 0; c < C; ++c) {
      double acc = 0;
      for (int64_t r = 0; r < rows; ++r) acc += double(a.dout[r * OC + o]) * a.inp[r * C + c];
      a.dweight[o * C + c] += float(acc);
    }
  }
}

void matmul_backward_bias(const MatmulBackwardBiasArgs& a) {
  const int64_t rows = int64_t(a.B) * a.T, OC = a.OC;
#pragma omp parallel for
  for (int64_t o = 0; o < OC; ++o) {
    double acc = 0;
    for (int64_t r = 0; r < rows; ++r) acc += a.dout[r * OC + o];
    a.dbias[o] += float(acc);
  }
}

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> matmul() {
  return {Variant::reference("matmul_forward", &reference::matmul_forward),
          Variant::reference("matmul_backward", &reference::matmul_backward),
          Variant::reference("matmul_backward_bias", &reference::matmul_backward_bias)};
}

}  // namespace wb::references
