// CPU reference of matmul_forward, matmul_gelu_forward, matmul_backward and
// matmul_backward_bias, and the ports of the bf16 forms of matmul_forward,
// matmul_backward and matmul_backward_bias.
#include <vector>

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

namespace {

// acc(r, o) of a bf16 linear layer: the bias plus the row's products, in double over
// the widened inputs, for every output.
template <class Store>
void bf16_linear(const bf16* inp, const bf16* weight, const bf16* bias, int64_t rows, int64_t C, int64_t OC,
                 Store store) {
  std::vector<float> w(OC * C);
  for (int64_t i = 0; i < OC * C; ++i) w[i] = to_float(weight[i]);
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> x(C);
    for (int64_t c = 0; c < C; ++c) x[c] = to_float(inp[r * C + c]);
    for (int64_t o = 0; o < OC; ++o) {
      double acc = bias ? to_float(bias[o]) : 0.0;
      for (int64_t c = 0; c < C; ++c) acc += double(x[c]) * w[o * C + c];
      store(r * OC + o, acc);
    }
  }
}

}  // namespace

// The bf16 port: the same sums in double over the widened inputs, rounded once.
void matmul_forward_bf16(const MatmulForwardBf16Args& a) {
  bf16_linear(a.inp, a.weight, a.bias, int64_t(a.B) * a.T, a.C, a.OC,
              [&a](int64_t i, double acc) { a.out[i] = to_bf16(acc); });
}

// The bf16 port: pre rounded once from the sum, out the GELU of the unrounded sum
// rounded once (as a GEMM epilogue computes it from its fp32 accumulator).
void matmul_gelu_forward_bf16(const MatmulGeluForwardBf16Args& a) {
  bf16_linear(a.inp, a.weight, a.bias, int64_t(a.B) * a.T, a.C, a.OC, [&a](int64_t i, double acc) {
    a.pre[i] = to_bf16(acc);
    a.out[i] = to_bf16(gelu(double(float(acc))));
  });
}

// The two references it fuses, one after the other: pre exactly as matmul_forward's
// out, out exactly as gelu_forward's.
void matmul_gelu_forward(const MatmulGeluForwardArgs& a) {
  matmul_forward(MatmulForwardArgs{a.pre, a.inp, a.weight, a.bias, a.B, a.T, a.C, a.OC});
  gelu_forward(GeluForwardArgs{a.out, a.pre, int64_t(a.B) * a.T * a.OC});
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

// The bf16 port: the same sums in double over the widened inputs; dinp rounded once,
// dweight the old value widened plus the sum, rounded once.
void matmul_backward_bf16(const MatmulBackwardBf16Args& a) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;
  auto widened = [](const bf16* p, int64_t n) {
    std::vector<float> w(n);
    for (int64_t i = 0; i < n; ++i) w[i] = to_float(p[i]);
    return w;
  };
  const std::vector<float> dout = widened(a.dout, rows * OC), inp = widened(a.inp, rows * C),
                           weight = widened(a.weight, OC * C);
  // dinp = dout @ weight (overwritten)
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < C; ++c) {
      double acc = 0;
      for (int64_t o = 0; o < OC; ++o) acc += double(dout[r * OC + o]) * weight[o * C + c];
      a.dinp[r * C + c] = to_bf16(acc);
    }
  }
  // dweight += dout^T @ inp
#pragma omp parallel for
  for (int64_t o = 0; o < OC; ++o) {
    for (int64_t c = 0; c < C; ++c) {
      double acc = 0;
      for (int64_t r = 0; r < rows; ++r) acc += double(dout[r * OC + o]) * inp[r * C + c];
      a.dweight[o * C + c] = to_bf16(double(to_float(a.dweight[o * C + c])) + acc);
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

// The bf16 port: the column sums in double over the widened dout, added to the old
// value widened, rounded once.
void matmul_backward_bias_bf16(const MatmulBackwardBiasBf16Args& a) {
  const int64_t rows = int64_t(a.B) * a.T, OC = a.OC;
#pragma omp parallel for
  for (int64_t o = 0; o < OC; ++o) {
    double acc = 0;
    for (int64_t r = 0; r < rows; ++r) acc += to_float(a.dout[r * OC + o]);
    a.dbias[o] = to_bf16(double(to_float(a.dbias[o])) + acc);
  }
}

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> matmul() {
  return {WB_REFERENCE(matmul_forward),
          WB_REFERENCE_PORT(matmul_forward_bf16),
          WB_REFERENCE_PORT(matmul_gelu_forward_bf16),
          WB_REFERENCE(matmul_gelu_forward),
          WB_REFERENCE(matmul_backward),
          WB_REFERENCE_PORT(matmul_backward_bf16),
          WB_REFERENCE(matmul_backward_bias),
          WB_REFERENCE_PORT(matmul_backward_bias_bf16)};
}

}  // namespace wb::references
